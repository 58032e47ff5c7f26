{#- The rule an event of cdc_events() breaks, or null. -#}
{% macro cdc_event_issue(key) -%}
    {{ return(adapter.dispatch('cdc_event_issue', 'gdpr_lakehouse')(key)) }}
{%- endmacro %}

{% macro spark__cdc_event_issue(key) -%}
    case
        when {{ key }} is null then 'missing key'
        when _source_ts is null then 'missing source time'
        when event_op is null then 'unknown _op (allowed: insert, update, delete; Debezium c, r, u, d)'
    end
{%- endmacro %}
