{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        materialized='incremental',
        unique_key=['admitted_month', 'icd10_chapter', 'department_id'],
        full_refresh=false,
        on_schema_change='append_new_columns',
    )
}}

{#-
    Anonymous aggregate that keeps counting an erased patient's encounters (the
    right-to-be-forgotten guide's "anonymous aggregates"). It counts, per admission
    month, ICD-10 chapter and department: every encounter in silver_encounters now
    (recounted at one pinned version each run, so a corrected encounter moves to its
    new group, a source delete is subtracted and an encounter that passes quality late
    is counted), plus every encounter an erasure deleted from silver (read once from
    that erasure's Change Data Feed and kept in erased_encounter_count, which is why
    the model is incremental and never rebuilt by --full-refresh). The compliance test
    gold_encounters_monthly_equals_recompute checks it.
-#}
{%- set upstream = ref('silver_encounters') -%}
{%- set latest = gdpr_lakehouse.latest_delta_version(upstream) | int -%}
{%- set consumed = gdpr_lakehouse.consumed_version(this if is_incremental() else none) | int -%}
{%- set columns = ['admitted_at', 'diagnosis_category', 'department_id', 'cost_amount'] %}

with live as (
    select
        {{ columns | join(', ') }},
        1 as live_count
    from {{ upstream }} version as of {{ [latest, 0] | max }}  -- noqa: AL01,AL05,RF04
),

erased as (
    {{ gdpr_lakehouse.erased_changes(upstream, consumed, latest, columns) }}
),

encounters as (
    select * from live
    union all
    select
        {{ columns | join(', ') }},
        0 as live_count
    from erased
),

chapters as (
    select * from {{ ref('icd10_chapters') }}
),

counted as (
    select
        date_trunc('month', encounters.admitted_at) as admitted_month,
        coalesce(chapters.chapter, 'unknown') as icd10_chapter,
        encounters.department_id,
        sum(encounters.live_count) as live_count,
        sum(case when encounters.live_count = 1 then encounters.cost_amount else 0 end) as live_cost,
        sum(1 - encounters.live_count) as erased_count,
        sum(case when encounters.live_count = 0 then encounters.cost_amount else 0 end) as erased_cost
    from encounters
    left join chapters
        on encounters.diagnosis_category between chapters.first_category and chapters.last_category
    group by 1, 2, 3
),

{% if is_incremental() %}
{#- every group counted before too: one whose last live encounter left keeps its erased count -#}
merged as (
    select
        coalesce(counted.admitted_month, kept.admitted_month) as admitted_month,
        coalesce(counted.icd10_chapter, kept.icd10_chapter) as icd10_chapter,
        coalesce(counted.department_id, kept.department_id) as department_id,
        coalesce(counted.live_count, 0) as live_count,
        coalesce(counted.live_cost, 0) as live_cost,
        coalesce(counted.erased_count, 0) {% if consumed >= 0 %}+ coalesce(kept.erased_encounter_count, 0){% endif %} as erased_count,
        coalesce(counted.erased_cost, 0) {% if consumed >= 0 %}+ coalesce(kept.erased_total_cost, 0){% endif %} as erased_cost
    from counted
    full outer join {{ this }} as kept
        on
            counted.admitted_month = kept.admitted_month
            and counted.icd10_chapter = kept.icd10_chapter
            and counted.department_id = kept.department_id
),
{% else %}
merged as (
    select * from counted
),
{% endif %}

final as (
    select
        admitted_month,
        icd10_chapter,
        department_id,
        cast(live_count + erased_count as bigint) as encounter_count,
        cast(live_cost + erased_cost as decimal(22, 2)) as total_cost,
        cast(erased_count as bigint) as erased_encounter_count,
        cast(erased_cost as decimal(22, 2)) as erased_total_cost,
        cast({{ latest }} as bigint) as source_version{{ gdpr_lakehouse.retired_columns(['admitted_month', 'icd10_chapter', 'department_id', 'encounter_count', 'total_cost', 'erased_encounter_count', 'erased_total_cost', 'source_version']) }}  -- noqa: LT02
    from merged
)

select * from final
