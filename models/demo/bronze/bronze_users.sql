{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key='user_pseudonym',
        post_hook=["{{ gdpr_lakehouse.record_landing_files('users') }}"],
    )
}}

{#- A user is named by the pseudonym the vault gives them, never by the web shop's id:
    once their key is destroyed, nothing maps any version of this table back to them. -#}
{{- gdpr_lakehouse.refuse_clear_columns(['user_id', 'source_updated_at'],
    'dbt build --full-refresh --select bronze_users+ (then python -m python_jobs.purge removes the source ids from its history)') }}

-- depends_on: {{ ref('bronze_rejected_events') }}
with events as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', 'users'), 'user_id',
        gdpr_lakehouse.anonymized_record_id('valid.user_id'),
        gdpr_lakehouse.source_seq('referenced._source_ts', 'referenced.event_record_ref')) }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

encrypted as (
    select
        vault.subject_pseudonym as user_pseudonym,
        {{ gdpr_lakehouse.encrypt_pii('events.username', 'vault.data_key', 'vault.subject_pseudonym', 'username_enc') }} as username_enc,
        {{ gdpr_lakehouse.encrypt_pii('events.email', 'vault.data_key', 'vault.subject_pseudonym', 'email_enc') }} as email_enc,
        events.registered_on,
        events.preferences,
        {{ gdpr_lakehouse.cdc_event_columns('events') }}
    from events
    inner join vault on events.user_id = vault.subject_id
    where {{ gdpr_lakehouse.not_tombstoned('events.user_id') }}
)

select * from encrypted
