{#- The predicate that keeps the rows of this build's files of `entity` (a landing
    table's name), on `alias` (a relation alias, or '' for none): a literal list of
    paths, or false when the batch has none. -#}
{% macro landing_batch_predicate(entity, alias='') -%}
    {{ return(adapter.dispatch('landing_batch_predicate', 'gdpr_lakehouse')(entity, alias)) }}
{%- endmacro %}

{% macro spark__landing_batch_predicate(entity, alias='') -%}
    {%- set batch = ref('bronze_landing_batch') -%}
    {%- set ledger = ref('bronze_landing_ledger') -%}
    {%- if not modules.re.match('^[a-z_][a-z0-9_]*$', entity) -%}
        {%- do exceptions.raise_compiler_error("landing_batch_predicate: entity " ~ entity[:64] ~ " is not a landing table name") -%}
    {%- endif -%}
    {%- set column = (alias ~ '.' if alias else '') ~ '_metadata.file_path' -%}
    {%- if not execute -%}
        {{ return(column ~ ' is null') }}
    {%- endif -%}
    {#- a node that reads several landing tables (privacy_subject_keys reads five) asks
        once for every entity's files: the batch is written by bronze_landing_batch
        alone, before any node that reads it -#}
    {%- set memo = gdpr_lakehouse._node_memo(batch) -%}
    {%- set memo_key = 'landing_batch_predicate ' ~ batch -%}
    {%- if memo is none -%}
        {%- set paths = run_query("select file_path from " ~ batch ~ " where entity = '" ~ entity
            ~ "' and file_issue is null order by file_path").columns[0].values() -%}
    {%- else -%}
        {%- if memo_key not in memo -%}
            {%- set by_entity = {} -%}
            {%- for row in run_query("select entity, file_path from " ~ batch
                    ~ " where file_issue is null order by entity, file_path") -%}
                {%- do by_entity.setdefault(row[0], []).append(row[1]) -%}
            {%- endfor -%}
            {%- do memo.update({memo_key: by_entity}) -%}
        {%- endif -%}
        {%- set paths = memo[memo_key].get(entity, []) -%}
    {%- endif -%}
    {%- set quoted = [] -%}
    {%- for path in paths -%}
        {%- if not modules.re.match(gdpr_lakehouse.landing_path_pattern(), path) -%}
            {%- do exceptions.raise_compiler_error("landing_batch_predicate: the batch holds a path with characters outside the allowed set: " ~ path[:120]) -%}
        {%- endif -%}
        {%- do quoted.append("'" ~ path ~ "'") -%}
    {%- endfor -%}
    {{ return(column ~ ' in (' ~ quoted | join(', ') ~ ')' if quoted else 'false') }}
{%- endmacro %}
