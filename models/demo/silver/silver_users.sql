{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
with checked as (
    select * from {{ ref('silver_users_checked') }}
    where quality_issue is null
),

final as (
    select
        user_pseudonym,
        username_enc,
        email_enc,
        registered_on,
        preferences['theme'] as preferred_theme,
        preferences['lang'] as preferred_language,
        ingested_at
    from checked
)

select * from final
