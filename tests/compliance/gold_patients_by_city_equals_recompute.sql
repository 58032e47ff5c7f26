{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(tags=['compliance'], meta={'fix': 'dbt run --select gold_patients_by_city'}) }}
{#- The CDF-maintained aggregate equals a full recompute from its upstream. After an
    erasure it catches up at the next build (meta.fix, printed when this fails). -#}
with maintained as (
    select
        city,
        patient_count
    from {{ ref('gold_patients_by_city') }}
    where patient_count != 0
),

recomputed as (
    select
        coalesce(city, 'unknown') as city,
        count(*) as patient_count
    from {{ ref('bronze_patients') }}
    group by 1
),

differences as (
    select
        coalesce(maintained.city, recomputed.city) as city,
        maintained.patient_count as maintained_count,
        recomputed.patient_count as recomputed_count
    from maintained
    full outer join recomputed on maintained.city = recomputed.city
    where
        maintained.patient_count is null
        or recomputed.patient_count is null
        or maintained.patient_count != recomputed.patient_count
)

select * from differences
