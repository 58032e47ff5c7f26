{#
    on-run-start: register every source whose meta says `landing_format` as an
    external table over its folder under var landing_path, with the columns and types
    its yml declares (a new, empty landing zone still has a schema), then REFRESH it so
    files that arrived since are seen. Reads the sources from the graph: no list here.
    Each is read with ignoreCorruptFiles: a file Spark cannot read as declared (not
    Parquet, or a column whose type cannot be cast) is skipped, never the whole build;
    bronze.landing_ledger records it as rejected and it is tried again at every build
    until fixed. For the demo's ledger, landing.landing_files lists every file under
    the landing zone (binaryFile: path, size, time; the content is never read). An
    adopting project's landing sources (its own, meta landing_format) are registered
    the same way.
#}
{% macro create_landing_tables() -%}
    {{ return(adapter.dispatch('create_landing_tables', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__create_landing_tables() -%}
    {%- if execute and flags.WHICH in ('build', 'run', 'test', 'snapshot', 'show', 'compile') -%}
        {%- set root = gdpr_lakehouse.landing_path() -%}
        {%- for source in graph.sources.values()
              if source.package_name in (project_name, gdpr_lakehouse.engine_package()) and source.source_meta.get('landing_format') -%}
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
                ~ " options (ignoreCorruptFiles 'true') location '" ~ root ~ '/' ~ source.identifier ~ "'") -%}
            {#- a table made before the option existed takes it (idempotent) -#}
            {%- do run_query('alter table ' ~ source.schema ~ '.' ~ source.identifier
                ~ " set serdeproperties ('ignoreCorruptFiles' = 'true')") -%}
            {%- do run_query('refresh table ' ~ source.schema ~ '.' ~ source.identifier) -%}
        {%- endfor -%}
        {%- if gdpr_lakehouse.demo_enabled() -%}
        {%- set files = gdpr_lakehouse.landing_files_relation() -%}
        {%- do run_query('create schema if not exists ' ~ files.schema) -%}
        {%- do run_query('create table if not exists ' ~ files
            ~ " using binaryFile options (recursiveFileLookup 'true') location '" ~ root ~ "'") -%}
        {%- do run_query('refresh table ' ~ files) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
