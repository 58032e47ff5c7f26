{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{#- Every encounter silver publishes names a department reference.departments lists
    (what a relationships test checked while the department was stored in clear). It
    is health data, kept encrypted under the patient's key: decrypted here, in the
    query, in a projection (an unwrapped key may not sit in a join condition). A row
    whose key does not open its department fails too. -#}
with encounters as (
    select
        encounters.encounter_ref,
        {{ gdpr_lakehouse.decrypt_pii('encounters.department_id_enc', 'vault.data_key', 'vault.subject_pseudonym', 'department_id_enc') }} as department_id
    from {{ ref('silver_encounters') }} as encounters
    inner join {{ ref('privacy_data_keys') }} as vault
        on encounters.patient_pseudonym = vault.subject_pseudonym
)

select encounters.encounter_ref
from encounters
left join {{ ref('departments') }} as departments
    on encounters.department_id = departments.department_id
where departments.department_id is null
