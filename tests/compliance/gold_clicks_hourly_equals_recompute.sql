{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(tags=['compliance'], meta={'fix': 'dbt run --select gold_clicks_hourly'}) }}
{#- The anonymous aggregate, less what it keeps of erased users, equals a recount of
    silver_clicks; what it keeps of them is never negative nor more than its total.
    After a change to silver it catches up at the next build (meta.fix). -#}
with maintained as (
    select
        clicked_hour,
        device,
        click_count - erased_click_count as click_count
    from {{ ref('gold_clicks_hourly') }}
    where click_count != erased_click_count
),

recomputed as (
    select
        date_trunc('hour', clicked_at) as clicked_hour,
        coalesce(device, 'unknown') as device,
        count(*) as click_count
    from {{ ref('silver_clicks') }}
    group by 1, 2
),

differences as (
    select
        coalesce(maintained.clicked_hour, recomputed.clicked_hour) as clicked_hour,
        coalesce(maintained.device, recomputed.device) as device,
        maintained.click_count as maintained_count,
        recomputed.click_count as recomputed_count
    from maintained
    full outer join recomputed
        on
            maintained.clicked_hour = recomputed.clicked_hour
            and maintained.device = recomputed.device
    where
        maintained.click_count is null
        or recomputed.click_count is null
        or maintained.click_count != recomputed.click_count
),

impossible as (
    select
        clicked_hour,
        device,
        click_count as maintained_count,
        erased_click_count as recomputed_count
    from {{ ref('gold_clicks_hourly') }}
    where erased_click_count is null or erased_click_count < 0 or erased_click_count > click_count
)

select * from differences
union all
select * from impossible
