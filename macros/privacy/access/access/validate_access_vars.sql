{#- on-run-start: the names that reach GRANT statements are group names. -#}
{% macro validate_access_vars() -%}
    {{ return(adapter.dispatch('validate_access_vars', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__validate_access_vars() -%}
    {%- if target.type == 'databricks' -%}
        {%- set groups = gdpr_lakehouse.consumer_groups() + [gdpr_lakehouse.pii_reader_group()] -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
