{{ config(materialized='view') }}

{#- Consumers read patients here: identifiers decrypted only for a PII reader
    (macro is_pii_reader), masked for everyone else; shredded keys read as null. -#}
with patients as (
    select * from {{ ref('silver_patients') }}
),

vault as (
    select
        subject_pseudonym,
        {{ gdpr_lakehouse.unwrap_key('data_key') }} as data_key
    from {{ ref('privacy_subject_keys') }}
),

final as (
    select
        patients.patient_pseudonym,
        case
            when {{ gdpr_lakehouse.is_pii_reader() }}
                then {{ gdpr_lakehouse.decrypt_pii('patients.full_name_enc', 'vault.data_key') }}
            else '***'
        end as full_name,
        case
            when {{ gdpr_lakehouse.is_pii_reader() }}
                then {{ gdpr_lakehouse.decrypt_pii('patients.email_enc', 'vault.data_key') }}
            else regexp_replace({{ gdpr_lakehouse.decrypt_pii('patients.email_enc', 'vault.data_key') }}, '^[^@]+', '***')
        end as email,
        case
            when {{ gdpr_lakehouse.is_pii_reader() }}
                then {{ gdpr_lakehouse.decrypt_pii('patients.phone_enc', 'vault.data_key') }}
            else '***'
        end as phone,
        case
            when {{ gdpr_lakehouse.is_pii_reader() }}
                then {{ gdpr_lakehouse.decrypt_pii('patients.national_id_enc', 'vault.data_key') }}
            else '***'
        end as national_id,
        case
            when {{ gdpr_lakehouse.is_pii_reader() }}
                then {{ gdpr_lakehouse.decrypt_pii('patients.address_enc', 'vault.data_key') }}
            else '***'
        end as address,
        patients.age_band,
        patients.city,
        patients.insurer
    from patients
    left join vault on patients.patient_pseudonym = vault.subject_pseudonym
)

select * from final
