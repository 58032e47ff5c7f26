{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
with users as (
    select user_pseudonym from {{ ref('silver_users') }}
),

clicks as (
    select * from {{ ref('gold_clicks_by_user') }}
),

revenue as (
    select * from {{ ref('gold_revenue_by_user') }}
),

combined as (
    select
        users.user_pseudonym,
        coalesce(clicks.click_count, 0) as click_count,
        coalesce(revenue.order_count, 0) as order_count,
        coalesce(revenue.revenue, 0) as revenue
    from users
    left join clicks on users.user_pseudonym = clicks.user_pseudonym
    left join revenue on users.user_pseudonym = revenue.user_pseudonym
),

final as (
    select
        user_pseudonym,
        click_count,
        order_count,
        revenue,
        case
            when order_count >= 2 and revenue >= 300 then 'champion'
            when order_count >= 1 then 'customer'
            when click_count >= 5 then 'browser'
            else 'dormant'
        end as engagement_segment
    from combined
)

-- restricted subjects (GDPR Art. 18, legal holds) are kept, not published
select * from final
where {{ gdpr_lakehouse.not_restricted('final.user_pseudonym') }}
