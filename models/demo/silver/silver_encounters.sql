{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{#- The diagnosis, its category, the admitting department and the cost are health
    data (GDPR Art. 9): stored
    encrypted under the patient's key, as in bronze, so every version silver's history
    keeps is unreadable once the key is destroyed. A model that needs them decrypts
    them in its query (decrypt_pii_or_fail). -#}
with checked as (
    select * from {{ ref('silver_encounters_checked') }}
    where quality_issue is null
),

final as (
    select
        encounter_ref,
        patient_pseudonym,
        admitted_at_enc,
        admitted_month,
        {{ gdpr_lakehouse.encrypt_pii('upper(diagnosis_code)', 'patient_data_key', 'patient_pseudonym', 'diagnosis_code_enc') }} as diagnosis_code_enc,
        {{ gdpr_lakehouse.encrypt_pii('substring(upper(diagnosis_code), 1, 3)', 'patient_data_key', 'patient_pseudonym', 'diagnosis_category_enc') }} as diagnosis_category_enc,
        {{ gdpr_lakehouse.encrypt_pii('department_id', 'patient_data_key', 'patient_pseudonym', 'department_id_enc') }} as department_id_enc,
        {{ gdpr_lakehouse.encrypt_pii('cast(cost_value as decimal(12, 2))', 'patient_data_key', 'patient_pseudonym', 'cost_enc') }} as cost_enc,
        ingested_at
    from checked
)

select * from final
