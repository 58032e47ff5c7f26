{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='ephemeral') }}

with users as (
    select * from {{ ref('bronze_users') }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

decrypted as (
    select
        users.*,
        {{ gdpr_lakehouse.decrypt_pii('users.email_enc', 'vault.data_key', 'vault.subject_pseudonym', 'email_enc') }} as email
    from users
    inner join vault on users.user_pseudonym = vault.subject_pseudonym
),

checked as (
    select
        *,
        case
            when email is null or not email rlike '{{ gdpr_lakehouse.landing_column_pattern('users', 'email') }}' then 'invalid email'
            when registered_on is null then 'missing registration date'
        end as quality_issue
    from decrypted
)

select * from checked
