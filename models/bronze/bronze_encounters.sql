{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key='encounter_id',
        post_hook=["{{ gdpr_lakehouse.record_landing_files('encounters') }}"],
    )
}}

-- depends_on: {{ ref('bronze_rejected_events') }}
with events as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', 'encounters'), 'encounter_id') }}
),

final as (
    select
        events.encounter_id,
        events.patient_id,
        events.admitted_at,
        events.diagnosis_code,
        events.department_id,
        events.cost,
        {{ gdpr_lakehouse.cdc_event_columns('events') }}
    from events
    where {{ gdpr_lakehouse.not_tombstoned('events.patient_id') }}
)

select * from final
