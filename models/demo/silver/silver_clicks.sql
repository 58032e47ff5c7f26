{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
with checked as (
    select * from {{ ref('silver_clicks_checked') }}
    where quality_issue is null
),

final as (
    select
        click_ref,
        user_pseudonym,
        url,
        clicked_at_enc,
        clicked_hour,
        device,
        ip_address_enc,
        ingested_at
    from checked
)

select * from final
