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
    it; an erasure changes no version). Never rebuilt by --full-refresh. What it counts: macro demo_retained_aggregate.
-#}
{{ gdpr_lakehouse.k_anonymous_aggregate(**gdpr_lakehouse.demo_retained_aggregate('gold_encounters_monthly')) }}
