{{ config(materialized='view') }}

{#- Consumers read users here: identifiers decrypted only for a PII reader. -#}
with users as (
    select * from {{ ref('silver_users') }}
),

vault as (
    select
        subject_pseudonym,
        {{ gdpr_lakehouse.unwrap_key('data_key') }} as data_key
    from {{ ref('privacy_subject_keys') }}
),

final as (
    select
        users.user_pseudonym,
        case
            when {{ gdpr_lakehouse.is_pii_reader() }}
                then {{ gdpr_lakehouse.decrypt_pii('users.username_enc', 'vault.data_key') }}
            else '***'
        end as username,
        case
            when {{ gdpr_lakehouse.is_pii_reader() }}
                then {{ gdpr_lakehouse.decrypt_pii('users.email_enc', 'vault.data_key') }}
            else regexp_replace({{ gdpr_lakehouse.decrypt_pii('users.email_enc', 'vault.data_key') }}, '^[^@]+', '***')
        end as email,
        users.registered_on,
        users.preferred_theme,
        users.preferred_language
    from users
    left join vault on users.user_pseudonym = vault.subject_pseudonym
)

select * from final
