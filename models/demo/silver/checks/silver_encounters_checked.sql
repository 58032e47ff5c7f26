{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='ephemeral') }}

{#- The diagnosis, the department and the cost are decrypted here, in the query, with the patient's
    key, to be checked; silver_encounters encrypts them again under the same key
    (patient_data_key, which this ephemeral model never stores). -#}
with vault as (
    select * from {{ ref('privacy_data_keys') }}
),

encounters as (
    select
        bronze.*,
        {{ gdpr_lakehouse.decrypt_pii('bronze.diagnosis_code_enc', 'vault.data_key', 'vault.subject_pseudonym', 'diagnosis_code_enc') }} as diagnosis_code,
        {{ gdpr_lakehouse.decrypt_pii('bronze.department_id_enc', 'vault.data_key', 'vault.subject_pseudonym', 'department_id_enc') }} as department_id,
        cast({{ gdpr_lakehouse.decrypt_pii('bronze.cost_enc', 'vault.data_key', 'vault.subject_pseudonym', 'cost_enc') }} as double) as cost_value,
        vault.data_key as patient_data_key
    from {{ ref('bronze_encounters') }} as bronze
    left join vault on bronze.patient_pseudonym = vault.subject_pseudonym
),

patients as (
    select * from {{ ref('silver_known_patients') }}
),

departments as (
    select department_id from {{ ref('departments') }}
),

checked as (
    select
        encounters.*,
        case
            when patients.subject_pseudonym is null then 'unknown patient'
            when encounters.admitted_month is null then 'missing admission time'
            when encounters.diagnosis_code is null or not encounters.diagnosis_code rlike '^[A-Z][0-9]{2}([.][0-9A-Z]{1,4})?$' then 'invalid ICD-10 code'
            when departments.department_id is null then 'unknown department'
            when encounters.cost_value is null or encounters.cost_value < 0 then 'invalid cost'
        end as quality_issue
    from encounters
    left join patients on encounters.patient_pseudonym = patients.subject_pseudonym
    left join departments on encounters.department_id = departments.department_id
)

select * from checked
