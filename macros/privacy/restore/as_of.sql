{#
    A relation as it stood when business day `date` closed, for a model's FROM:

        select * from {{ gdpr_lakehouse.as_of(ref('silver_patients'), '2026-01-05') }} as patients

    renders `(select * from <relation> version as of <v> ...)`, v the version
    as_of_business_date names (with its checks and errors). An old version still holds
    the rows of subjects erased since; they are left out: a relation keyed by subject
    keeps only the rows of subjects the vault holds a key for and that no tombstone
    names (and rows with no subject, such as orders already anonymized), so reading
    the past never brings an erased person back. In a relation whose contract
    anonymizes on erasure (bronze.orders), the rows of a subject erased after that
    day are left out of the read, not anonymized in it. The model depends
    on the vault and the tombstones for it.
#}
{% macro as_of(relation, date) -%}
    {{ return(adapter.dispatch('as_of', 'gdpr_lakehouse')(relation, date)) }}
{%- endmacro %}

{% macro spark__as_of(relation, date) -%}
    {%- if not execute -%}
        {#- while parsing, ref() names the calling model: record the vault and the
            tombstones (and their key) as its dependencies, read nothing -#}
        {%- do ref('privacy_subject_keys') -%}
        {%- do gdpr_lakehouse.not_tombstoned('subject_id') -%}
        {{ return('(select * from ' ~ relation ~ ')') }}
    {%- endif -%}
    {%- set nodes = [] -%}
    {%- for node in graph.nodes.values()
          if node.resource_type in ('model', 'snapshot', 'seed')
          and (node.schema | lower) == (relation.schema | lower) and (node.alias | lower) == (relation.identifier | lower) -%}
        {%- do nodes.append(node) -%}
    {%- endfor -%}
    {%- if nodes | length != 1 -%}
        {%- do exceptions.raise_compiler_error("as_of: " ~ relation ~ " is not a model, snapshot or seed of this project; "
            ~ "pass ref('<model>'), e.g. as_of(ref('silver_patients'), '2026-01-05')") -%}
    {%- endif -%}
    {%- set found = gdpr_lakehouse._business_version_of(nodes[0].name, date, 'as_of') -%}
    {%- set privacy = (nodes[0].config.get('meta') or {}).get('privacy') or {} -%}
    {%- set kept = '' -%}
    {%- if privacy.get('subject_key') -%}
        {%- set column = privacy.subject_key -%}
        {%- if not modules.re.match('^[A-Za-z_][A-Za-z0-9_]*$', column | string) -%}
            {%- do exceptions.raise_compiler_error("as_of: " ~ relation ~ " declares subject_key " ~ (column | string)[:60] ~ ", not a column name") -%}
        {%- endif -%}
        {%- set kept = ' where `' ~ column ~ '` is null or `' ~ column ~ '` in (select vault.' ~ ('subject_pseudonym' if privacy.get('subject_key_kind') == 'pseudonym' else 'subject_id')
            ~ ' from ' ~ ref('privacy_subject_keys') ~ ' as vault where ' ~ gdpr_lakehouse.not_tombstoned('vault.subject_id') ~ ')' -%}
    {%- endif -%}
    {{ return('(select * from ' ~ relation ~ ' version as of ' ~ found.version ~ kept ~ ')') }}
{%- endmacro %}
