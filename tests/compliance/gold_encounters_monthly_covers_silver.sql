{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(tags=['compliance'], meta={'fix': 'dbt run --select gold_encounters_monthly'}) }}
{#- The k-anonymous aggregate counts what silver_encounters holds: every published cell
    holds at least silver's encounters, cost and distinct patients in it (more by the
    patients erased since it was published, never fewer), and every cell of at least
    var k_anonymity patients in silver is published. After a change to silver it
    catches up at the next build (meta.fix). -#}
with published as (
    select * from {{ ref('gold_encounters_monthly') }}
),

recounted as (
    select
        date_trunc('month', encounters.admitted_at) as admitted_month,
        coalesce(chapters.chapter, 'unknown') as icd10_chapter,
        encounters.department_id,
        count(*) as encounter_count,
        sum(encounters.cost_amount) as total_cost,
        count(distinct encounters.patient_pseudonym) as subject_count
    from {{ ref('silver_encounters') }} as encounters
    left join {{ ref('icd10_chapters') }} as chapters
        on encounters.diagnosis_category between chapters.first_category and chapters.last_category
    group by 1, 2, 3
),

differences as (
    select
        coalesce(published.admitted_month, recounted.admitted_month) as admitted_month,
        coalesce(published.icd10_chapter, recounted.icd10_chapter) as icd10_chapter,
        coalesce(published.department_id, recounted.department_id) as department_id,
        published.encounter_count as published_count,
        recounted.encounter_count as silver_count,
        published.total_cost as published_cost,
        recounted.total_cost as silver_cost,
        published.subject_count as published_subjects,
        recounted.subject_count as silver_subjects
    from published
    full outer join recounted
        on
            published.admitted_month <=> recounted.admitted_month
            and published.icd10_chapter <=> recounted.icd10_chapter
            and published.department_id <=> recounted.department_id
    where
        (published.encounter_count is null and recounted.subject_count >= {{ gdpr_lakehouse.k_anonymity() }})
        or published.encounter_count < coalesce(recounted.encounter_count, 0)
        or published.total_cost < coalesce(recounted.total_cost, 0)
        or published.subject_count < coalesce(recounted.subject_count, 0)
        or published.subject_count > published.encounter_count
)

select * from differences
