{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(tags=['compliance'], meta={'fix': 'dbt run --select gold_patients_by_city'}) }}
{#- The k-anonymous city aggregate covers bronze_patients as it is now (macro
    k_anonymous_coverage_sql). After a change to bronze it catches up at the next
    build (meta.fix). -#}
{{ gdpr_lakehouse.k_anonymous_coverage_sql(
    aggregate=ref('gold_patients_by_city'),
    upstream=ref('bronze_patients'),
    subject='patient_id',
    cells=[['city', "coalesce(rows.city, 'unknown')"]],
    measures=[['patient_count', 'count(*)', 'bigint']],
) }}
