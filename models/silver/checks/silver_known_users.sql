{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='ephemeral') }}

{#- Users bronze knows, with their pseudonym: what clicks and orders are checked against. -#}
with users as (
    select user_id from {{ ref('bronze_users') }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
)

select
    users.user_id,
    vault.subject_pseudonym
from users
inner join vault on users.user_id = vault.subject_id
