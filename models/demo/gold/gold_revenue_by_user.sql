{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{#- Published per user: the day of their last order, never its exact time. -#}
with orders as (
    select * from {{ ref('silver_orders') }}
),

final as (
    select
        user_pseudonym,
        count(*) as order_count,
        sum(amount) as revenue,
        max(ordered_on) as last_ordered_on
    from orders
    where user_pseudonym is not null
    group by user_pseudonym
)

-- restricted subjects (GDPR Art. 18, legal holds) are kept, not published
select * from final
where {{ gdpr_lakehouse.not_restricted('final.user_pseudonym') }}
