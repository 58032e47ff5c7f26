{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='view', meta={'audience': 'consumers'}, grants=gdpr_lakehouse.consumer_grants()) }}

{#- Consumers read users here: identifiers decrypted only for a PII reader. -#}
with users as (
    select * from {{ ref('silver_users') }}
),

vault as (
    select
        subject_pseudonym,
        data_key
    from {{ ref('privacy_subject_keys') }}
),

final as (
    select
        users.user_pseudonym,
        {{ gdpr_lakehouse.reveal_pii('users.username_enc', 'vault.data_key', 'vault.subject_pseudonym', 'username_enc') }} as username,
        {{ gdpr_lakehouse.reveal_pii('users.email_enc', 'vault.data_key', 'vault.subject_pseudonym', 'email_enc', mask='email') }} as email,
        users.registered_on,
        users.preferred_theme,
        users.preferred_language
    from users
    left join vault on users.user_pseudonym = vault.subject_pseudonym
)

-- restricted subjects (GDPR Art. 18, legal holds) are kept, not published
select * from final
where {{ gdpr_lakehouse.not_restricted('final.user_pseudonym') }}
