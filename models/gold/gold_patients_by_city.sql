{{ config(materialized='incremental', unique_key='city') }}

{#-
    Patients per city, maintained from bronze_patients' Change Data Feed instead of a
    recompute (shared reference 004's city-population example): each run reads the
    commits since the version it last consumed (source_version) and applies +1 for
    insert / update_postimage, -1 for delete / update_preimage. The first run (and
    --full-refresh) counts the upstream at one pinned version. Erasure in bronze flows
    through as deletes. If the upstream's history no longer reaches back (log
    retention) or it was recreated, run with --full-refresh.
-#}
{%- set upstream = ref('bronze_patients') -%}
{%- set latest = 0 -%}
{%- set consumed = -1 -%}
{%- if execute -%}
    {%- set latest = run_query('describe history ' ~ upstream ~ ' limit 1').columns[0].values()[0] -%}
    {%- if is_incremental() -%}
        {%- set consumed = run_query('select coalesce(max(source_version), -1) from ' ~ this).columns[0].values()[0] -%}
    {%- endif -%}
{%- endif -%}

{% if is_incremental() %}
with changes as (
    {% if latest > consumed %}
    select
        coalesce(city, 'unknown') as city,
        case when _change_type in ('insert', 'update_postimage') then 1 else -1 end as change
    from table_changes('{{ upstream }}', {{ consumed + 1 }}, {{ latest }})
    {% else %}
    select
        'unknown' as city,
        0 as change
    where false
    {% endif %}
),

net as (
    select city, sum(change) as change
    from changes
    group by city
),

final as (
    select
        net.city,
        coalesce(counted.patient_count, 0) + net.change as patient_count,
        cast({{ latest }} as bigint) as source_version
    from net
    left join {{ this }} as counted on net.city = counted.city
)
{% else %}
with patients as (
    select coalesce(city, 'unknown') as city
    from {{ upstream }} version as of {{ latest }}
),

final as (
    select
        city,
        cast(count(*) as bigint) as patient_count,
        cast({{ latest }} as bigint) as source_version
    from patients
    group by city
)
{% endif %}

select * from final
