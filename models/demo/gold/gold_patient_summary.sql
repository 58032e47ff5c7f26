{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{%- set k = gdpr_lakehouse.k_anonymity() %}
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
        {{ gdpr_lakehouse.decrypt_pii_or_fail('encounters.department_id_enc', 'vault.data_key', 'vault.subject_pseudonym', 'department_id_enc', 'gold_patient_summary.department_count') }} as department_id,
        encounters.admitted_month,
        cast({{ gdpr_lakehouse.decrypt_pii_or_fail('encounters.cost_enc', 'vault.data_key', 'vault.subject_pseudonym', 'cost_enc', 'gold_patient_summary.total_cost') }} as decimal(12, 2)) as cost_amount
    from {{ ref('silver_encounters') }} as encounters
    left join vault on encounters.patient_pseudonym = vault.subject_pseudonym
),

per_patient as (
    select
        patient_pseudonym,
        count(*) as encounter_count,
        sum(cost_amount) as total_cost,
        count(distinct department_id) as department_count,
        -- the month only (silver keeps no exact admission time in clear): an exact
        -- time is a record of its own the hospital can look up
        min(admitted_month) as first_admitted_month,
        max(admitted_month) as last_admitted_month
    from encounters
    group by patient_pseudonym
),

joined as (
    select
        patients.patient_pseudonym,
        patients.age_band,
        {{ gdpr_lakehouse.decrypt_pii_or_fail('patients.city_enc', 'vault.data_key', 'vault.subject_pseudonym', 'city_enc', 'gold_patient_summary.city') }} as city,
        {{ gdpr_lakehouse.decrypt_pii_or_fail('patients.insurer_enc', 'vault.data_key', 'vault.subject_pseudonym', 'insurer_enc', 'gold_patient_summary.insurer') }} as insurer,
        coalesce(per_patient.encounter_count, 0) as encounter_count,
        coalesce(per_patient.total_cost, 0) as total_cost,
        coalesce(per_patient.department_count, 0) as department_count,
        per_patient.first_admitted_month,
        per_patient.last_admitted_month
    from patients
    left join vault on patients.patient_pseudonym = vault.subject_pseudonym
    left join per_patient on patients.patient_pseudonym = per_patient.patient_pseudonym
    -- restricted subjects (GDPR Art. 18, legal holds) are kept, not published
    where {{ gdpr_lakehouse.not_restricted('patients.patient_pseudonym') }}
),

counted as (
    select
        *,
        count(*) over (partition by city) as city_patients,
        count(*) over (partition by city, insurer) as city_insurer_patients
    from joined
),

-- The city and the insurer single a patient out (with the age band): each is
-- published only in the rows of at least var k_anonymity patients who share it (the
-- insurer beside its city), and left null elsewhere. The table is rebuilt whole, so
-- every version history keeps holds the rule for the patients of that version.
final as (
    select
        patient_pseudonym,
        age_band,
        case when city_patients >= {{ k }} then city end as city,
        case when city_insurer_patients >= {{ k }} then insurer end as insurer,
        encounter_count,
        total_cost,
        department_count,
        first_admitted_month,
        last_admitted_month
    from counted
)

select * from final
