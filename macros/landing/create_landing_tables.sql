{#
    on-run-start: register every source whose meta says `landing_format` as an
    external table over its folder under var landing_path, with the columns and types
    its yml declares (a new, empty landing zone still has a schema), then REFRESH it so
    files that arrived since are seen. Reads the sources from the graph: no list here.
#}
{% macro create_landing_tables() -%}
    {%- if execute and flags.WHICH in ('build', 'run', 'test', 'snapshot', 'show', 'compile') -%}
        {%- set root = gdpr_lakehouse.landing_path() -%}
        {%- for source in graph.sources.values()
              if source.package_name == project_name and source.source_meta.get('landing_format') -%}
            {%- set format = source.source_meta['landing_format'] -%}
            {%- if format not in ('parquet', 'json', 'csv') -%}
                {%- do exceptions.raise_compiler_error("source " ~ source.source_name ~ ": landing_format "
                    ~ format ~ " is not supported; use parquet, json or csv") -%}
            {%- endif -%}
            {%- set columns = [] -%}
            {%- for column in source.columns.values() -%}
                {%- if not modules.re.match('^[a-z_][a-z0-9_]*$', column.name)
                      or not modules.re.match('^[a-z0-9_<>, ()]+$', column.data_type or '') -%}
                    {%- do exceptions.raise_compiler_error("source " ~ source.name ~ ": column "
                        ~ column.name ~ " needs a plain name and a data_type") -%}
                {%- endif -%}
                {%- do columns.append(column.name ~ ' ' ~ column.data_type) -%}
            {%- endfor -%}
            {%- do run_query('create schema if not exists ' ~ source.schema) -%}
            {%- do run_query('create table if not exists ' ~ source.schema ~ '.' ~ source.identifier
                ~ ' (' ~ columns | join(', ') ~ ') using ' ~ format
                ~ " location '" ~ root ~ '/' ~ source.identifier ~ "'") -%}
            {%- do run_query('refresh table ' ~ source.schema ~ '.' ~ source.identifier) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{# Where the landing zone is: var landing_path, default $LAKEHOUSE_DIR/landing. #}
{% macro landing_path() -%}
    {%- set path = var('landing_path', env_var('LAKEHOUSE_DIR', '.lakehouse') ~ '/landing') | string -%}
    {%- if not modules.re.match('^[A-Za-z0-9_./:@+-]+$', path) -%}
        {%- do exceptions.raise_compiler_error("landing_path " ~ path[:80]
            ~ " may only contain letters, digits and _ . / : @ + -") -%}
    {%- endif -%}
    {{ return(path.rstrip('/')) }}
{%- endmacro %}
