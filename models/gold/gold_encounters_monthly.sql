{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        full_refresh=false,
        on_schema_change='append_new_columns',
    )
}}

{#-
    Anonymous aggregate that keeps counting an erased patient's encounters (the
    right-to-be-forgotten guide's "anonymous aggregates"), per admission month, ICD-10
    chapter and department, published k-anonymously and blind to erasure (macro
    k_anonymous_aggregate: a cell appears once var k_anonymity patients are counted in
    it; an erasure changes no version). Never rebuilt by --full-refresh.
-#}
{{ gdpr_lakehouse.k_anonymous_aggregate(
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
