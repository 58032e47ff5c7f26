{{
    config(
        materialized='incremental',
        unique_key=['admitted_month', 'icd10_chapter', 'department_id'],
        full_refresh=false,
    )
}}

{#-
    Anonymous aggregate that keeps counting an erased patient's encounters (the
    right-to-be-forgotten guide's "anonymous aggregates"): each run adds only the
    encounters that arrived since the last run (silver ingested_at > high-water mark)
    to the running totals; erasure in silver never recomputes it. Never rebuilt by
    --full-refresh, which would lose the erased patients' counts.
-#}
with encounters as (
    select * from {{ ref('silver_encounters') }}
    {% if is_incremental() %}
    where ingested_at > (select coalesce(max(consumed.last_ingested_at), timestamp '1900-01-01 00:00:00') from {{ this }} as consumed)
    {% endif %}
),

chapters as (
    select * from {{ ref('icd10_chapters') }}
),

arrived as (
    select
        date_trunc('month', encounters.admitted_at) as admitted_month,
        coalesce(chapters.chapter, 'unknown') as icd10_chapter,
        encounters.department_id,
        count(*) as encounter_count,
        sum(encounters.cost_amount) as total_cost,
        max(encounters.ingested_at) as last_ingested_at
    from encounters
    left join chapters
        on encounters.diagnosis_category between chapters.first_category and chapters.last_category
    group by 1, 2, 3
),

final as (
    select
        arrived.admitted_month,
        arrived.icd10_chapter,
        arrived.department_id,
        {% if is_incremental() %}
        coalesce(running.encounter_count, 0) + arrived.encounter_count as encounter_count,
        coalesce(running.total_cost, 0) + arrived.total_cost as total_cost,
        {% else %}
        arrived.encounter_count,
        arrived.total_cost,
        {% endif %}
        arrived.last_ingested_at
    from arrived
    {% if is_incremental() %}
    left join {{ this }} as running
        on
            arrived.admitted_month = running.admitted_month
            and arrived.icd10_chapter = running.icd10_chapter
            and arrived.department_id = running.department_id
    {% endif %}
)

select * from final
