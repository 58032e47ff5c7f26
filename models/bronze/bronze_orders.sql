{{ config(unique_key='order_id', cdc_delete_condition="source_op = 'delete'") }}

with events as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', 'orders'), 'order_id') }}
),

final as (
    select
        order_id,
        user_id,
        amount,
        ordered_at,
        _op as source_op,
        _source_ts as source_updated_at,
        current_timestamp() as ingested_at
    from events
    where {{ gdpr_lakehouse.not_tombstoned('events.user_id') }}
)

select * from final
