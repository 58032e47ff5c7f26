{#- on-run-start: a var business_date that is not a day, or more than 7 days ahead,
    stops the run before anything is written. -#}
{% macro validate_business_date() -%}
    {{ return(adapter.dispatch('validate_business_date', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__validate_business_date() -%}
    {%- do gdpr_lakehouse.business_date() -%}
    {{ return('') }}
{%- endmacro %}
