{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
with patients as (
    select * from {{ ref('silver_patients') }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

-- silver keeps the department and the cost encrypted under the patient's key:
-- decrypted here, in the query
encounters as (
    select
        encounters.patient_pseudonym,
        {{ gdpr_lakehouse.decrypt_pii_or_fail('encounters.department_id_enc', 'vault.data_key', 'gold_patient_summary.department_count') }} as department_id,
        encounters.admitted_at,
        cast({{ gdpr_lakehouse.decrypt_pii_or_fail('encounters.cost_enc', 'vault.data_key', 'gold_patient_summary.total_cost') }} as decimal(12, 2)) as cost_amount
    from {{ ref('silver_encounters') }} as encounters
    left join vault on encounters.patient_pseudonym = vault.subject_pseudonym
),

per_patient as (
    select
        patient_pseudonym,
        count(*) as encounter_count,
        sum(cost_amount) as total_cost,
        count(distinct department_id) as department_count,
        min(admitted_at) as first_admitted_at,
        max(admitted_at) as last_admitted_at
    from encounters
    group by patient_pseudonym
),

final as (
    select
        patients.patient_pseudonym,
        patients.age_band,
        patients.city,
        patients.insurer,
        coalesce(per_patient.encounter_count, 0) as encounter_count,
        coalesce(per_patient.total_cost, 0) as total_cost,
        coalesce(per_patient.department_count, 0) as department_count,
        per_patient.first_admitted_at,
        per_patient.last_admitted_at
    from patients
    left join per_patient on patients.patient_pseudonym = per_patient.patient_pseudonym
)

-- restricted subjects (GDPR Art. 18, legal holds) are kept, not published
select * from final
where {{ gdpr_lakehouse.not_restricted('final.patient_pseudonym') }}
