{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key='click_ref',
        post_hook=["{{ gdpr_lakehouse.record_landing_files('clicks') }}"],
    )
}}

{#- The user is named by the pseudonym the vault gives them (the vault keys every user
    a click names), never by the web shop's id, and the click by its id hashed under
    the tombstone key (click_ref), never by the shop's click id, which the shop links to
    the user. -#}
{#- An exact event time (and the source time of its change, the same instant in the
    demo) singles a person out to whoever saw them at that moment: bronze keeps it
    encrypted under the subject's key (clicked_at_enc) and in clear only the hour
    (clicked_hour), and its place in the apply order keyed (source_seq, macro
    source_seq). -#}
{{- gdpr_lakehouse.refuse_clear_columns(['user_id', 'click_id', 'clicked_at', 'source_updated_at'],
    'dbt build --full-refresh --select bronze_clicks+ (then python -m python_jobs.purge removes the source ids from its history)') }}

-- depends_on: {{ ref('bronze_rejected_events') }}
with events as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', 'clicks'), 'click_id',
        gdpr_lakehouse.anonymized_record_id('valid.click_id'),
        gdpr_lakehouse.source_seq('referenced._source_ts', 'referenced.event_record_ref')) }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

final as (
    select
        events.event_record_ref as click_ref,
        vault.subject_pseudonym as user_pseudonym,
        events.url,
        {{ gdpr_lakehouse.encrypt_pii('events.clicked_at', 'vault.data_key', 'vault.subject_pseudonym', 'clicked_at_enc') }} as clicked_at_enc,
        date_trunc('hour', events.clicked_at) as clicked_hour,
        events.device,
        {#- A click naming no user keeps no address: there is no key to hold it. One of a
            user the vault has no key for waits (macro cdc_event_has_key). -#}
        {{ gdpr_lakehouse.encrypt_pii('events.ip_address', 'vault.data_key', 'vault.subject_pseudonym', 'ip_address_enc') }} as ip_address_enc,
        {{ gdpr_lakehouse.cdc_event_columns('events') }}
    from events
    left join vault on events.user_id = vault.subject_id
    where
        {{ gdpr_lakehouse.not_tombstoned('events.user_id') }}
        and {{ gdpr_lakehouse.cdc_event_has_key('events', 'user_id') }}
)

select * from final
