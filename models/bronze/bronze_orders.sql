{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key='order_id',
        post_hook=["{{ gdpr_lakehouse.record_landing_files('orders') }}"],
    )
}}

{#- Orders are kept by law (on_erasure: anonymize): an erased user's orders, and every
    later event for them, are ingested with user_id null, never dropped, so erasure,
    --full-refresh, later corrections and the landing purge all agree. -#}
-- depends_on: {{ ref('bronze_rejected_events') }}
with events as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', 'orders'), 'order_id') }}
),

final as (
    select
        events.order_id,
        {{ gdpr_lakehouse.unless_tombstoned('events.user_id') }} as user_id,
        events.amount,
        events.ordered_at,
        {{ gdpr_lakehouse.cdc_event_columns('events') }}
    from events
)

select * from final
