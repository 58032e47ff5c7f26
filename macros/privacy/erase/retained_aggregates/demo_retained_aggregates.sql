{#- The names of the demo's retained anonymous aggregates (macro demo_retained_aggregate
    is each one's spec); none when the demo is off. -#}
{% macro demo_retained_aggregates() -%}
    {{ return(adapter.dispatch('demo_retained_aggregates', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__demo_retained_aggregates() -%}
    {{ return(['gold_encounters_monthly', 'gold_clicks_hourly', 'gold_patients_by_city'] if gdpr_lakehouse.demo_enabled() else []) }}
{%- endmacro %}
