{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{#- Published per user: the days of their first and last click, never the exact times
    (an exact time singles a person out to anyone who saw them click). -#}
with clicks as (
    select * from {{ ref('silver_clicks') }}
),

final as (
    select
        user_pseudonym,
        count(*) as click_count,
        count(distinct url) as distinct_url_count,
        to_date(min(clicked_hour)) as first_clicked_on,
        to_date(max(clicked_hour)) as last_clicked_on
    from clicks
    group by user_pseudonym
)

-- restricted subjects (GDPR Art. 18, legal holds) are kept, not published
select * from final
where {{ gdpr_lakehouse.not_restricted('final.user_pseudonym') }}
