{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
with checked as (
    select * from {{ ref('silver_orders_checked') }}
    where quality_issue is null
),

final as (
    select
        order_ref,
        user_pseudonym,
        cast(amount as decimal(12, 2)) as amount,
        ordered_at_enc,
        ordered_on,
        ingested_at
    from checked
)

select * from final
