{% macro cdc_valid_events(relation, key, batch_only=false) -%}
    {{ return(adapter.dispatch('cdc_valid_events', 'gdpr_lakehouse')(relation, key, batch_only)) }}
{%- endmacro %}

{% macro spark__cdc_valid_events(relation, key, batch_only=false) -%}
    select
        *,
        case event_op when 'delete' then 2 when 'update' then 1 else 0 end as event_op_rank
    from ({{ gdpr_lakehouse.cdc_events(relation, key, batch_only) }}) as described
    where {{ gdpr_lakehouse.cdc_event_issue(key) }} is null
{%- endmacro %}
