{{
    config(
        materialized='incremental',
        unique_key=['clicked_hour', 'device'],
        full_refresh=false,
    )
}}

{#- Anonymous clicks per hour and device (the guide's clicks_hourly): additive over
    the clicks that arrived since the last run, so erasure never lowers it. -#}
with clicks as (
    select * from {{ ref('silver_clicks') }}
    {% if is_incremental() %}
    where ingested_at > (select coalesce(max(consumed.last_ingested_at), timestamp '1900-01-01 00:00:00') from {{ this }} as consumed)
    {% endif %}
),

arrived as (
    select
        date_trunc('hour', clicked_at) as clicked_hour,
        device,
        count(*) as click_count,
        max(ingested_at) as last_ingested_at
    from clicks
    group by 1, 2
),

final as (
    select
        arrived.clicked_hour,
        arrived.device,
        {% if is_incremental() %}
        coalesce(running.click_count, 0) + arrived.click_count as click_count,
        {% else %}
        arrived.click_count,
        {% endif %}
        arrived.last_ingested_at
    from arrived
    {% if is_incremental() %}
    left join {{ this }} as running
        on
            arrived.clicked_hour = running.clicked_hour
            and arrived.device = running.device
    {% endif %}
)

select * from final
