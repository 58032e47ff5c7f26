{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='ephemeral') }}

with orders as (
    select * from {{ ref('bronze_orders') }}
),

users as (
    select * from {{ ref('silver_known_users') }}
),

checked as (
    select
        orders.*,
        users.subject_pseudonym as user_pseudonym,
        case
            {#- null user: the user was erased and the order kept, anonymized (on_erasure: anonymize). #}
            when orders.user_id is not null and users.user_id is null then 'unknown user'
            when orders.ordered_at is null then 'missing order time'
            when orders.amount is null or orders.amount <= 0 then 'non-positive amount'
        end as quality_issue
    from orders
    left join users on orders.user_id = users.user_id
)

select * from checked
