{{ config(materialized='view') }}

{#- Consumers read users here: identifiers decrypted only for a PII reader. -#}
with users as (
    select * from {{ ref('silver_users') }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

final as (
    select
        users.user_pseudonym,
        {{ gdpr_lakehouse.reveal_pii('users.username_enc', 'vault.data_key') }} as username,
        {{ gdpr_lakehouse.reveal_pii('users.email_enc', 'vault.data_key', mask='email') }} as email,
        users.registered_on,
        users.preferred_theme,
        users.preferred_language
    from users
    left join vault on users.user_pseudonym = vault.subject_pseudonym
)

select * from final
