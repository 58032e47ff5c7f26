{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key='order_id',
        post_hook=["{{ gdpr_lakehouse.record_landing_files('orders') }}"],
    )
}}

{#- Orders are kept by law (on_erasure: anonymize): an erased user's orders, and every
    later event for them, are ingested with user_pseudonym null, never dropped, so erasure,
    --full-refresh, later corrections and the landing purge all agree. Such an order is
    keyed by its anonymized_record_id, not by the id the web shop links to the user
    (macro kept_record_key), as gdpr_erase leaves it. The user is named by the
    pseudonym the vault gives them (the vault keys every user an order names), never
    by the web shop's id. A living user's order with no key in the vault waits
    (macro cdc_event_has_key): stored, it would read as an erased user's anonymized
    order for good. -#}
{{- gdpr_lakehouse.refuse_clear_columns(['user_id'],
    'dbt build --full-refresh --select bronze_orders+ (then python -m python_jobs.purge removes the source ids from its history)') }}
-- depends_on: {{ ref('bronze_rejected_events') }}
with events as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', 'orders'), 'order_id',
        record_key=gdpr_lakehouse.kept_record_key('valid.order_id', 'valid.user_id')) }}
),

vault as (
    select
        subject_id,
        subject_pseudonym
    from {{ ref('privacy_subject_keys') }}
),

incoming as (
    select
        events.event_record_key as order_id,
        case when events.living_user_id is not null then vault.subject_pseudonym end as user_pseudonym,
        events.amount,
        events.ordered_at,
        {{ gdpr_lakehouse.cdc_event_columns('events') }}
    from (
        select
            *,
            {{ gdpr_lakehouse.unless_tombstoned('events.user_id') }} as living_user_id
        from events
    ) as events
    left join vault on events.user_id = vault.subject_id
    where {{ gdpr_lakehouse.cdc_event_has_key('events', 'living_user_id') }}
),

{% if is_incremental() -%}
{#- An order still under its source id while its user's erasure is under way (the
    tombstone written, this table not yet erased): an event for it moves it to its
    anonymous id, as the newer of the event and the row (by the apply order), and the
    row under the source id is deleted (a delete ordered just after it), so the order
    is never there twice. -#}
stranded as (
    select kept.*
    from {{ this }} as kept
    inner join events on kept.order_id = events.order_id
    where events.event_record_key != events.order_id
),

candidates as (
    select * from incoming
    union all
    select
        {{ gdpr_lakehouse.anonymized_record_id('stranded.order_id') }} as order_id,
        cast(null as string) as user_pseudonym,
        stranded.amount,
        stranded.ordered_at,
        stranded.source_op,
        stranded.source_updated_at,
        stranded.source_op_rank,
        stranded.source_file,
        stranded.source_row,
        stranded.ingested_at
    from stranded
),

newest as (
    select * from (
        select
            *,
            row_number() over (
                partition by order_id
                order by source_updated_at desc, source_op_rank desc, source_file desc, source_row desc
            ) as candidate_rank
        from candidates
    ) as ranked
    where candidate_rank = 1
),

final as (
    select
        order_id,
        user_pseudonym,
        amount,
        ordered_at,
        source_op,
        source_updated_at,
        source_op_rank,
        source_file,
        source_row,
        ingested_at
    from newest
    union all
    select
        stranded.order_id,
        cast(null as string) as user_pseudonym,
        cast(null as double) as amount,
        cast(null as timestamp) as ordered_at,
        'delete' as source_op,
        stranded.source_updated_at,
        stranded.source_op_rank + 3 as source_op_rank,
        stranded.source_file,
        stranded.source_row,
        current_timestamp() as ingested_at
    from stranded
)
{%- else -%}
final as (
    select * from incoming
)
{%- endif %}

select * from final
