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
    Anonymous clicks per hour and device (the guide's clicks_hourly), kept through
    erasure as gold_encounters_monthly is: k-anonymous and blind to erasure (macro
    k_anonymous_aggregate: an hour and device appear once var k_anonymity users are
    counted in them; an erasure changes no version). Never rebuilt by --full-refresh. What it counts: macro demo_retained_aggregate.
-#}
{{ gdpr_lakehouse.k_anonymous_aggregate(**gdpr_lakehouse.demo_retained_aggregate('gold_clicks_hourly')) }}
