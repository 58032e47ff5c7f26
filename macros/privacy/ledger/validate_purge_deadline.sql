{#- on-run-start: a purge deadline that could never be met stops the run, changing nothing. -#}
{% macro validate_purge_deadline() -%}
    {{ return(adapter.dispatch('validate_purge_deadline', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__validate_purge_deadline() -%}
    {%- do gdpr_lakehouse.purge_deadline_days() -%}
    {{ return('') }}
{%- endmacro %}
