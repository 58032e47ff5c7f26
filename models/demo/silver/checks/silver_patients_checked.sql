{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='ephemeral') }}

{#- Every bronze patient with its pseudonym and the first quality rule it breaks
    (null when clean). silver_patients keeps the clean ones, silver_quarantine the rest. -#}
with patients as (
    select * from {{ ref('bronze_patients') }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

decrypted as (
    select
        patients.*,
        vault.data_key,
        {{ gdpr_lakehouse.decrypt_pii('patients.email_enc', 'vault.data_key', 'vault.subject_pseudonym', 'email_enc') }} as email,
        try_cast({{ gdpr_lakehouse.decrypt_pii('patients.birth_date_enc', 'vault.data_key', 'vault.subject_pseudonym', 'birth_date_enc') }} as date) as birth_date
    from patients
    inner join vault on patients.patient_pseudonym = vault.subject_pseudonym
),

checked as (
    select
        *,
        case
            when email is null or not email rlike '{{ gdpr_lakehouse.landing_column_pattern('patients', 'email') }}' then 'invalid email'
            when birth_date is null then 'missing birth date'
            when birth_date > current_date() then 'birth date in the future'
        end as quality_issue
    from decrypted
)

select * from checked
