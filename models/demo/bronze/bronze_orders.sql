{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key='order_ref',
        post_hook=["{{ gdpr_lakehouse.record_landing_files('orders') }}"],
    )
}}

{#- Orders are kept by law (on_erasure: anonymize): an erased user's orders, and every
    later event for them, are ingested with user_pseudonym null, never dropped, so erasure,
    --full-refresh, later corrections and the landing purge all agree. Every order is
    keyed by its id hashed under the tombstone key (order_ref, macro
    anonymized_record_id), never by the id the web shop links to the user, so an order
    keeps one key before and after its user's erasure, and the shop's order ids find
    nothing in any version of this table. The user is named by the pseudonym the vault
    gives them (the vault keys every user an order names), never by the web shop's id.
    A living user's order with no key in the vault waits (macro cdc_event_has_key):
    stored, it would read as an erased user's anonymized order for good. -#}
{#- An exact event time (and the source time of its change, the same instant in the
    demo) singles a person out to whoever saw them at that moment: bronze keeps it
    encrypted under the subject's key (ordered_at_enc) and in clear only the day
    (ordered_on, which bookkeeping keeps), and its place in the apply order keyed
    (source_seq, macro source_seq). -#}
{{- gdpr_lakehouse.refuse_clear_columns(['user_id', 'order_id', 'ordered_at', 'source_updated_at'],
    'dbt build --full-refresh --select bronze_orders+ (then python -m python_jobs.purge removes the source ids from its history)') }}
-- depends_on: {{ ref('bronze_rejected_events') }}
with events as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', 'orders'), 'order_id',
        gdpr_lakehouse.anonymized_record_id('valid.order_id'),
        gdpr_lakehouse.source_seq('referenced._source_ts', 'referenced.event_record_ref')) }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

final as (
    select
        events.event_record_ref as order_ref,
        case when events.living_user_id is not null then vault.subject_pseudonym end as user_pseudonym,
        events.amount,
        {{ gdpr_lakehouse.encrypt_pii('events.ordered_at', 'case when events.living_user_id is not null then vault.data_key end', 'vault.subject_pseudonym', 'ordered_at_enc') }} as ordered_at_enc,
        to_date(events.ordered_at) as ordered_on,
        {{ gdpr_lakehouse.cdc_event_columns('events') }}
    from (
        select
            *,
            {{ gdpr_lakehouse.unless_tombstoned('events.user_id') }} as living_user_id
        from events
    ) as events
    left join vault on events.user_id = vault.subject_id
    where {{ gdpr_lakehouse.cdc_event_has_key('events', 'living_user_id') }}
)

select * from final
