{#- Where each landing table reads, as the catalog registered it (a run with --vars
    landing_path registers its own): {table name: qualified location, e.g.
    file:/home/me/.lakehouse/landing/patients}. One SHOW TABLE EXTENDED per schema and
    dbt invocation: only on-run-start (create_landing_tables) registers landing tables,
    before any node asks; a table not registered is left out. A file belongs to the table whose location
    its path starts with, at any depth (the tables read subfolders: recursiveFileLookup). -#}
{% macro landing_locations(entities) -%}
    {{ return(adapter.dispatch('landing_locations', 'gdpr_lakehouse')(entities)) }}
{%- endmacro %}

{% macro spark__landing_locations(entities) -%}
    {%- set found = {} -%}
    {%- if not execute -%}{{ return(found) }}{%- endif -%}
    {%- for entity in entities -%}
        {%- set relation = source('landing', entity) -%}
        {%- set memo = gdpr_lakehouse._invocation_cache() -%}
        {%- set memo_key = 'landing_locations ' ~ relation.schema -%}
        {%- if memo_key not in memo -%}
            {%- set in_schema = {} -%}
            {%- for row in run_query('show table extended in ' ~ relation.schema ~ " like '*'") if not row[2] -%}
                {%- set location = modules.re.search('(?m)^Location: (.*)$', row[3] or '') -%}
                {%- if location is not none -%}
                    {%- do in_schema.update({row[1]: location.group(1).rstrip('/')}) -%}
                {%- endif -%}
            {%- endfor -%}
            {%- do memo.update({memo_key: in_schema}) -%}
        {%- else -%}
            {%- set in_schema = memo[memo_key] -%}
        {%- endif -%}
        {%- set path = in_schema.get(relation.identifier) -%}
        {%- if path is not none -%}
            {%- if not modules.re.match(gdpr_lakehouse.landing_path_pattern(), path) -%}
                {%- do exceptions.raise_compiler_error("landing table " ~ relation.schema ~ '.' ~ relation.identifier
                    ~ " is registered at a location with characters outside the allowed set: " ~ path[:120]) -%}
            {%- endif -%}
            {%- do found.update({entity: path}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found) }}
{%- endmacro %}
