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
    Patients per city, kept through erasure as gold_encounters_monthly is:
    k-anonymous and blind to erasure (macro k_anonymous_aggregate: a city appears once
    var k_anonymity patients are counted in it; an erasure changes no version). It was
    maintained from bronze_patients' Change Data Feed before, where an erasure's
    deletes showed as "-1 in city X" at the erasure's build. Never rebuilt by
    --full-refresh. What it counts: macro demo_retained_aggregate.
-#}
{{ gdpr_lakehouse.k_anonymous_aggregate(**gdpr_lakehouse.demo_retained_aggregate('gold_patients_by_city')) }}
