{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='ephemeral') }}

with encounters as (
    select * from {{ ref('bronze_encounters') }}
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
        patients.subject_pseudonym as patient_pseudonym,
        case
            when patients.patient_id is null then 'unknown patient'
            when encounters.admitted_at is null then 'missing admission time'
            when not encounters.diagnosis_code rlike '^[A-Z][0-9]{2}([.][0-9A-Z]{1,4})?$' then 'invalid ICD-10 code'
            when departments.department_id is null then 'unknown department'
            when encounters.cost is null or encounters.cost < 0 then 'invalid cost'
        end as quality_issue
    from encounters
    left join patients on encounters.patient_id = patients.patient_id
    left join departments on encounters.department_id = departments.department_id
)

select * from checked
