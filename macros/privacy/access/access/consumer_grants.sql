{#- The grants of a relation published to consumers (the masked views; gold sets its
    own in dbt_project.yml): SELECT for the consumer groups and the PII readers. -#}
{% macro consumer_grants() -%}
    {{ return(adapter.dispatch('consumer_grants', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__consumer_grants() -%}
    {%- if target.type == 'databricks' -%}
        {{ return({'select': gdpr_lakehouse.consumer_groups() + [gdpr_lakehouse.pii_reader_group()]}) }}
    {%- else -%}
        {{ return({}) }}
    {%- endif -%}
{%- endmacro %}
