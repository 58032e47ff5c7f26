{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='incremental', unique_key='city') }}

{#-
    Patients per city, maintained from bronze_patients' Change Data Feed instead of a
    recompute (shared reference 004's city-population example): each run reads the
    commits since the version it last consumed (source_version) and applies +1 for
    insert / update_postimage, -1 for delete / update_preimage. The first run (and
    --full-refresh) counts the upstream at one pinned version. Erasure in bronze flows
    through as deletes. When the feed no longer reaches back to the first unconsumed
    version (a VACUUM, e.g. the purge after an erasure, deleted its change files, or
    log retention dropped it), the run recounts the upstream at one pinned version
    instead and sets cities that vanished to 0.
-#}
{%- set upstream = ref('bronze_patients') -%}
{%- set latest = gdpr_lakehouse.latest_delta_version(upstream) | int -%}
{%- set consumed = -1 -%}
{%- if is_incremental() -%}
    {%- set consumed = gdpr_lakehouse.scalar_query(
        'select coalesce(max(source_version), -1) from ' ~ this, -1) | int -%}
{%- endif -%}
{%- set recount = is_incremental() and gdpr_lakehouse.cdf_must_recount(upstream, consumed, latest) -%}

{% if is_incremental() and not recount %}
with changes as (
    {% if latest > consumed %}
    select
        coalesce(city, 'unknown') as city,
        case when _change_type in ('insert', 'update_postimage') then 1 else -1 end as delta_count
    from table_changes('{{ upstream }}', {{ consumed + 1 }}, {{ latest }})
    {% else %}
    select
        'unknown' as city,
        0 as delta_count
    where false
    {% endif %}
),

net_changes as (
    select
        city,
        sum(delta_count) as delta_count
    from changes
    group by city
),

final as (
    select
        net_changes.city,
        coalesce(counted.patient_count, 0) + net_changes.delta_count as patient_count,
        cast({{ latest }} as bigint) as source_version
    from net_changes
    left join {{ this }} as counted on net_changes.city = counted.city
)
{% else %}
with patients as (
    select coalesce(city, 'unknown') as city
    from {{ upstream }} version as of {{ [latest, 0] | max }}  -- noqa: AL01,AL05,RF04
),

counted as (
    select
        city,
        cast(count(*) as bigint) as patient_count
    from patients
    group by city
),

final as (
    {%- if recount %}
    {#- cities that vanished since are set to 0 -#}
    select
        coalesce(counted.city, maintained.city) as city,
        coalesce(counted.patient_count, 0) as patient_count,
        cast({{ latest }} as bigint) as source_version
    from counted
    full outer join {{ this }} as maintained on counted.city = maintained.city
    {%- else %}
    select
        city,
        patient_count,
        cast({{ latest }} as bigint) as source_version
    from counted
    {%- endif %}
)
{% endif %}

select * from final
