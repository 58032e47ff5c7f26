{#
    Layers are schemas: a model configured with `+schema: silver` lands in `silver`,
    not dbt's default `<target_schema>_silver`, so consumers query `silver.patients`.
    Models without a custom schema stay in the target's schema.
#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema | trim }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
