{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(tags=['compliance'], meta={'fix': 'dbt run --select gold_encounters_monthly'}) }}
{#- The k-anonymous aggregate covers silver_encounters as it is now (macro
    k_anonymous_coverage_sql): every published cell holds at least silver's
    encounters, cost and patients in it, and every cell of var k_anonymity patients in
    silver is published. After a change to silver it catches up at the next build
    (meta.fix). -#}
{{ gdpr_lakehouse.k_anonymous_coverage_sql(
    aggregate=ref('gold_encounters_monthly'),
    upstream=ref('silver_encounters'),
    subject='patient_pseudonym',
    cells=[
        ['admitted_month', "date_trunc('month', rows.admitted_at)"],
        ['icd10_chapter', "coalesce(chapters.chapter, 'unknown')"],
        ['department_id', 'rows.department_id'],
    ],
    measures=[
        ['encounter_count', 'count(*)', 'bigint'],
        ['total_cost', 'sum(rows.cost_amount)', 'decimal(22, 2)'],
    ],
    joins='left join ' ~ ref('icd10_chapters') ~ ' as chapters'
        ~ ' on rows.diagnosis_category between chapters.first_category and chapters.last_category',
) }}
