{{ config(materialized='ephemeral') }}

with orders as (
    select * from {{ ref('bronze_orders') }}
),

users as (
    select
        known_users.user_id,
        vault.subject_pseudonym
    from {{ ref('bronze_users') }} as known_users
    inner join {{ ref('privacy_subject_keys') }} as vault on known_users.user_id = vault.subject_id
),

checked as (
    select
        orders.*,
        users.subject_pseudonym as user_pseudonym,
        case
            when users.user_id is null then 'unknown user'
            when orders.ordered_at is null then 'missing order time'
            when orders.amount is null or orders.amount <= 0 then 'non-positive amount'
        end as quality_issue
    from orders
    left join users on orders.user_id = users.user_id
)

select * from checked
