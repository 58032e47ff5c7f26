{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
with checked as (
    select * from {{ ref('silver_encounters_checked') }}
    where quality_issue is null
),

final as (
    select
        encounter_id,
        patient_pseudonym,
        admitted_at,
        upper(diagnosis_code) as diagnosis_code,
        substring(upper(diagnosis_code), 1, 3) as diagnosis_category,
        department_id,
        cast(cost_value as decimal(12, 2)) as cost_amount,
        ingested_at
    from checked
)

select * from final
