{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key='patient_pseudonym',
        post_hook=["{{ gdpr_lakehouse.record_landing_files('patients') }}"],
    )
}}

{#- A patient is named by the pseudonym the vault gives them, never by the hospital's
    id: once their key is destroyed, nothing maps any version of this table back to
    them. The identifiers are encrypted under the same key, and so are the city and the
    insurer: with the age band they single a patient out, so a clear copy would let a
    reader of an old version link the pseudonym back to a person they know. -#}
{{- gdpr_lakehouse.refuse_clear_columns(['patient_id', 'city', 'insurer', 'source_updated_at'],
    'dbt build --full-refresh --select bronze_patients+ (then python -m python_jobs.purge removes the clear values from its history)') }}

-- depends_on: {{ ref('bronze_rejected_events') }}
with events as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', 'patients'), 'patient_id',
        gdpr_lakehouse.anonymized_record_id('valid.patient_id'),
        gdpr_lakehouse.source_seq('referenced._source_ts', 'referenced.event_record_ref')) }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

encrypted as (
    select
        vault.subject_pseudonym as patient_pseudonym,
        {{ gdpr_lakehouse.encrypt_pii('events.full_name', 'vault.data_key', 'vault.subject_pseudonym', 'full_name_enc') }} as full_name_enc,
        {{ gdpr_lakehouse.encrypt_pii('events.email', 'vault.data_key', 'vault.subject_pseudonym', 'email_enc') }} as email_enc,
        {{ gdpr_lakehouse.encrypt_pii('events.phone', 'vault.data_key', 'vault.subject_pseudonym', 'phone_enc') }} as phone_enc,
        {{ gdpr_lakehouse.encrypt_pii('events.national_id', 'vault.data_key', 'vault.subject_pseudonym', 'national_id_enc') }} as national_id_enc,
        {{ gdpr_lakehouse.encrypt_pii('events.birth_date', 'vault.data_key', 'vault.subject_pseudonym', 'birth_date_enc') }} as birth_date_enc,
        {{ gdpr_lakehouse.encrypt_pii('events.address', 'vault.data_key', 'vault.subject_pseudonym', 'address_enc') }} as address_enc,
        {{ gdpr_lakehouse.encrypt_pii('events.city', 'vault.data_key', 'vault.subject_pseudonym', 'city_enc') }} as city_enc,
        {{ gdpr_lakehouse.encrypt_pii('events.insurer', 'vault.data_key', 'vault.subject_pseudonym', 'insurer_enc') }} as insurer_enc,
        {{ gdpr_lakehouse.cdc_event_columns('events') }}
    from events
    inner join vault on events.patient_id = vault.subject_id
    where {{ gdpr_lakehouse.not_tombstoned('events.patient_id') }}
)

select * from encrypted
