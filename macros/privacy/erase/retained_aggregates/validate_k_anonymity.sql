{#- on-run-start: a k that is not a number of people stops the run, changing nothing. -#}
{% macro validate_k_anonymity() -%}
    {{ return(adapter.dispatch('validate_k_anonymity', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__validate_k_anonymity() -%}
    {%- do gdpr_lakehouse.k_anonymity() -%}
    {{ return('') }}
{%- endmacro %}
