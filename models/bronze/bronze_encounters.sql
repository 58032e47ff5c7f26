{{ config(unique_key='encounter_id', cdc_delete_condition="source_op = 'delete'") }}

with events as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', 'encounters'), 'encounter_id') }}
),

final as (
    select
        encounter_id,
        patient_id,
        admitted_at,
        diagnosis_code,
        department_id,
        cost,
        _op as source_op,
        _source_ts as source_updated_at,
        current_timestamp() as ingested_at
    from events
    where {{ gdpr_lakehouse.not_tombstoned('events.patient_id') }}
)

select * from final
