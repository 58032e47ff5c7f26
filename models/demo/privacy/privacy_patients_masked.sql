{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='view', meta={'audience': 'consumers'}, grants=gdpr_lakehouse.consumer_grants()) }}

{#- Consumers read patients here: identifiers decrypted only for a PII reader
    (macro is_pii_reader), masked for everyone else; shredded keys read as null. -#}
with patients as (
    select * from {{ ref('silver_patients') }}
),

vault as (
    select
        subject_pseudonym,
        data_key
    from {{ ref('privacy_subject_keys') }}
),

final as (
    select
        patients.patient_pseudonym,
        {{ gdpr_lakehouse.reveal_pii('patients.full_name_enc', 'vault.data_key', 'vault.subject_pseudonym', 'full_name_enc') }} as full_name,
        {{ gdpr_lakehouse.reveal_pii('patients.email_enc', 'vault.data_key', 'vault.subject_pseudonym', 'email_enc', mask='email') }} as email,
        {{ gdpr_lakehouse.reveal_pii('patients.phone_enc', 'vault.data_key', 'vault.subject_pseudonym', 'phone_enc') }} as phone,
        {{ gdpr_lakehouse.reveal_pii('patients.national_id_enc', 'vault.data_key', 'vault.subject_pseudonym', 'national_id_enc') }} as national_id,
        {{ gdpr_lakehouse.reveal_pii('patients.address_enc', 'vault.data_key', 'vault.subject_pseudonym', 'address_enc') }} as address,
        patients.age_band,
        {{ gdpr_lakehouse.reveal_pii('patients.city_enc', 'vault.data_key', 'vault.subject_pseudonym', 'city_enc') }} as city,
        {{ gdpr_lakehouse.reveal_pii('patients.insurer_enc', 'vault.data_key', 'vault.subject_pseudonym', 'insurer_enc') }} as insurer
    from patients
    left join vault on patients.patient_pseudonym = vault.subject_pseudonym
)

-- restricted subjects (GDPR Art. 18, legal holds) are kept, not published
select * from final
where {{ gdpr_lakehouse.not_restricted('final.patient_pseudonym') }}
