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
        case
            {#- null user: the user was erased and the order kept, anonymized (on_erasure: anonymize). #}
            when orders.user_pseudonym is not null and users.subject_pseudonym is null then 'unknown user'
            when orders.ordered_on is null then 'missing order time'
            when orders.amount is null or orders.amount <= 0 then 'non-positive amount'
        end as quality_issue
    from orders
    left join users on orders.user_pseudonym = users.subject_pseudonym
)

select * from checked
