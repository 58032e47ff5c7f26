{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key='encounter_ref',
        post_hook=["{{ gdpr_lakehouse.record_landing_files('encounters') }}"],
    )
}}

{#- The diagnosis, the admitting department (oncology, psychiatry, obstetrics: it
    says what the patient is treated for) and the cost are health data (GDPR Art. 9):
    encrypted on arrival
    with the patient's key, like the direct identifiers, so every copy history keeps
    (time travel, the Change Data Feed) is unreadable once the key is destroyed. The
    vault keys every patient an encounter names (subject_feeds); an encounter without
    a patient keeps neither: there is no key to hold them; one of a patient the vault
    has no key for waits (macro cdc_event_has_key). The patient is named by
    the pseudonym the vault gives them, never by the hospital's id, and the encounter by
    its id hashed under the tombstone key (encounter_ref), never by the hospital's
    encounter id, which the hospital links to the patient: once the key is destroyed,
    nothing maps any version of this table back to the patient. -#}
{#- An exact event time (and the source time of its change, the same instant in the
    demo) singles a person out to whoever saw them at that moment: bronze keeps it
    encrypted under the subject's key (admitted_at_enc) and in clear only the month
    (admitted_month), and its place in the apply order keyed (source_seq, macro
    source_seq). -#}
{{- gdpr_lakehouse.refuse_clear_columns(['diagnosis_code', 'department_id', 'cost', 'patient_id', 'encounter_id', 'admitted_at', 'source_updated_at'],
    'dbt build --full-refresh --select bronze_encounters+ (then python -m python_jobs.purge removes the clear values from its history)') }}

-- depends_on: {{ ref('bronze_rejected_events') }}
with events as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', 'encounters'), 'encounter_id',
        gdpr_lakehouse.anonymized_record_id('valid.encounter_id'),
        gdpr_lakehouse.source_seq('referenced._source_ts', 'referenced.event_record_ref')) }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

final as (
    select
        events.event_record_ref as encounter_ref,
        vault.subject_pseudonym as patient_pseudonym,
        {{ gdpr_lakehouse.encrypt_pii('events.admitted_at', 'vault.data_key', 'vault.subject_pseudonym', 'admitted_at_enc') }} as admitted_at_enc,
        trunc(events.admitted_at, 'MM') as admitted_month,
        {{ gdpr_lakehouse.encrypt_pii('events.diagnosis_code', 'vault.data_key', 'vault.subject_pseudonym', 'diagnosis_code_enc') }} as diagnosis_code_enc,
        {{ gdpr_lakehouse.encrypt_pii('events.department_id', 'vault.data_key', 'vault.subject_pseudonym', 'department_id_enc') }} as department_id_enc,
        {{ gdpr_lakehouse.encrypt_pii('events.cost', 'vault.data_key', 'vault.subject_pseudonym', 'cost_enc') }} as cost_enc,
        {{ gdpr_lakehouse.cdc_event_columns('events') }}
    from events
    left join vault on events.patient_id = vault.subject_id
    where
        {{ gdpr_lakehouse.not_tombstoned('events.patient_id') }}
        and {{ gdpr_lakehouse.cdc_event_has_key('events', 'patient_id') }}
)

select * from final
