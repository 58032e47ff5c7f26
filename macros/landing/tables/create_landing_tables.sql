{#
    on-run-start: register every source whose meta says `landing_format` as an
    external table over its folder under var landing_path, with the columns and types
    its yml declares (a new, empty landing zone still has a schema), then REFRESH it so
    files that arrived since are seen. Reads the sources from the graph: no list here.
    Each reads every file under its folder, at any depth (recursiveFileLookup), with
    ignoreCorruptFiles: a file Spark cannot read as declared (not
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
        {%- set tables = [] -%}
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
            {%- do tables.append({'schema': source.schema, 'identifier': source.identifier, 'option': true,
                'create': '(' ~ columns | join(', ') ~ ') using ' ~ format
                    ~ " options (" ~ gdpr_lakehouse._landing_options() ~ ") location '" ~ root ~ '/' ~ source.identifier ~ "'"}) -%}
        {%- endfor -%}
        {%- if gdpr_lakehouse.demo_enabled() -%}
            {%- set files = gdpr_lakehouse.landing_files_relation() -%}
            {%- do tables.append({'schema': files.schema, 'identifier': files.identifier, 'option': false,
                'create': "using binaryFile options (recursiveFileLookup 'true') location '" ~ root ~ "'"}) -%}
        {%- endif -%}
        {#- what is registered already, one statement per schema: a command that finds
            every table as it should be runs only the REFRESHes (23 statements were 8) -#}
        {%- set found = gdpr_lakehouse._registered_landing_tables(tables | map(attribute='schema') | unique | list) -%}
        {%- set made = [] -%}
        {%- for table in tables -%}
            {%- set name = table.schema ~ '.' ~ table.identifier -%}
            {%- set state = found.get(name | lower) -%}
            {%- if state is none -%}
                {%- if table.schema not in made -%}
                    {%- do run_query('create schema if not exists ' ~ table.schema) -%}
                    {%- do made.append(table.schema) -%}
                {%- endif -%}
                {%- do run_query('create table if not exists ' ~ name ~ ' ' ~ table.create) -%}
            {%- elif table.option and not state.has_options -%}
                {#- a table made before the options existed takes them -#}
                {%- do run_query('alter table ' ~ name ~ " set serdeproperties (" ~ gdpr_lakehouse._landing_options(' = ') ~ ")") -%}
            {%- endif -%}
            {%- do run_query('refresh table ' ~ name) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{#- The options of every landing table: skip a file Spark cannot read as declared (the
    ledger records it rejected), and read every file under the table's folder, at any
    depth (a date-partitioned sink's topic/2026/12/04/part-0.parquet). -#}
{% macro _landing_options(separator=' ') -%}
    {{ return("'ignoreCorruptFiles'" ~ separator ~ "'true', 'recursiveFileLookup'" ~ separator ~ "'true'") }}
{%- endmacro %}

{#- The landing tables registered in these schemas: {'schema.table' (lower case):
    {'has_options': whether its storage properties hold every _landing_options()}}.
    One SHOW SCHEMAS, then one SHOW TABLE EXTENDED per schema that exists. -#}
{% macro _registered_landing_tables(schemas) -%}
    {%- set present = run_query('show schemas').columns[0].values() | map('lower') | list -%}
    {%- set found = {} -%}
    {%- for schema in schemas if schema | lower in present -%}
        {%- for row in run_query('show table extended in ' ~ schema ~ " like '*'") if not row[2] -%}
            {%- set storage = modules.re.search('(?m)^Storage Properties: \\[(.*)\\]$', row[3] or '') -%}
            {%- set held = storage.group(1).split(', ') if storage is not none else [] -%}
            {%- do found.update({(schema ~ '.' ~ row[1]) | lower: {'has_options':
                'ignoreCorruptFiles=true' in held and 'recursiveFileLookup=true' in held}}) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(found) }}
{%- endmacro %}
