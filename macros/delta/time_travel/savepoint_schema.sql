{#- The schema savepoint copies live in: var savepoint_schema (default savepoints), a
    lower-case identifier. -#}
{% macro savepoint_schema() -%}
    {{ return(adapter.dispatch('savepoint_schema', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__savepoint_schema() -%}
    {%- set schema = var('savepoint_schema', 'savepoints') -%}
    {%- if schema is not string or not modules.re.match('^[a-z][a-z0-9_]{0,63}$', schema) -%}
        {%- do exceptions.raise_compiler_error("var savepoint_schema must be a lower-case identifier (letters, digits, _), e.g. savepoints; got "
            ~ (schema | tojson)[:60]) -%}
    {%- endif -%}
    {{ return(schema) }}
{%- endmacro %}
