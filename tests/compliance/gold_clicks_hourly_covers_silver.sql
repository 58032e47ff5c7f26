{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(tags=['compliance'], meta={'fix': 'dbt run --select gold_clicks_hourly'}) }}
{#- The k-anonymous clicks aggregate covers silver_clicks as it is now (macro
    k_anonymous_coverage_sql). After a change to silver it catches up at the next
    build (meta.fix). -#}
{{ gdpr_lakehouse.k_anonymous_coverage_sql(
    aggregate=ref('gold_clicks_hourly'),
    upstream=ref('silver_clicks'),
    subject='user_pseudonym',
    cells=[
        ['clicked_hour', "date_trunc('hour', rows.clicked_at)"],
        ['device', "coalesce(rows.device, 'unknown')"],
    ],
    measures=[['click_count', 'count(*)', 'bigint']],
) }}
