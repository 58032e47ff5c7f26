{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='ephemeral') }}

with clicks as (
    select * from {{ ref('bronze_clicks') }}
),

users as (
    select * from {{ ref('silver_known_users') }}
),

checked as (
    select
        clicks.*,
        case
            when users.subject_pseudonym is null then 'unknown user'
            when clicks.clicked_hour is null then 'missing click time'
            when clicks.url is null or not clicks.url like '/%' then 'invalid url'
        end as quality_issue
    from clicks
    left join users on clicks.user_pseudonym = users.subject_pseudonym
)

select * from checked
