{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        materialized='incremental',
        unique_key=['clicked_hour', 'device'],
        full_refresh=false,
        on_schema_change='append_new_columns',
    )
}}

{#-
    Anonymous clicks per hour and device (the guide's clicks_hourly), kept through
    erasure as gold_encounters_monthly is: every click in silver_clicks now (recounted
    at one pinned version each run) plus every click an erasure deleted from silver
    (read once from that erasure's Change Data Feed, kept in erased_click_count).
    Checked by the compliance test gold_clicks_hourly_equals_recompute.
-#}
{%- set upstream = ref('silver_clicks') -%}
{%- set latest = gdpr_lakehouse.latest_delta_version(upstream) | int -%}
{%- set consumed = gdpr_lakehouse.consumed_version(this if is_incremental() else none) | int -%}
{%- set columns = ['clicked_at', 'device'] %}

with live as (
    select
        {{ columns | join(', ') }},
        1 as live_count
    from {{ upstream }} version as of {{ [latest, 0] | max }}  -- noqa: AL01,AL05,RF04
),

erased as (
    {{ gdpr_lakehouse.erased_changes(upstream, consumed, latest, columns) }}
),

clicks as (
    select * from live
    union all
    select
        {{ columns | join(', ') }},
        0 as live_count
    from erased
),

counted as (
    select
        date_trunc('hour', clicked_at) as clicked_hour,
        coalesce(device, 'unknown') as device,
        sum(live_count) as live_count,
        sum(1 - live_count) as erased_count
    from clicks
    group by 1, 2
),

{% if is_incremental() %}
{#- every hour counted before too: one whose last live click left keeps its erased count -#}
merged as (
    select
        coalesce(counted.clicked_hour, kept.clicked_hour) as clicked_hour,
        coalesce(counted.device, kept.device) as device,
        coalesce(counted.live_count, 0) as live_count,
        coalesce(counted.erased_count, 0) {% if consumed >= 0 %}+ coalesce(kept.erased_click_count, 0){% endif %} as erased_count
    from counted
    full outer join {{ this }} as kept
        on
            counted.clicked_hour = kept.clicked_hour
            and counted.device = kept.device
),
{% else %}
merged as (
    select * from counted
),
{% endif %}

final as (
    select
        clicked_hour,
        device,
        cast(live_count + erased_count as bigint) as click_count,
        cast(erased_count as bigint) as erased_click_count,
        cast({{ latest }} as bigint) as source_version{{ gdpr_lakehouse.retired_columns(['clicked_hour', 'device', 'click_count', 'erased_click_count', 'source_version']) }}  -- noqa: LT02
    from merged
)

select * from final
