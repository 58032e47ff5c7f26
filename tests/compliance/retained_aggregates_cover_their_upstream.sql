{{ config(tags=['compliance'], meta={'fix': 'dbt run --select gold_encounters_monthly gold_clicks_hourly gold_patients_by_city'}) }}
{# Each k-anonymous retained aggregate covers its upstream as it is now (macro
   k_anonymous_coverage_sql, the model's own spec): every published cell holds at least
   the upstream's rows, measures and subjects in it, and every cell of var k_anonymity
   subjects upstream is published. After a change upstream it catches up at the next
   build (meta.fix). #}
{% set names = gdpr_lakehouse.demo_retained_aggregates() %}
{% for name in names %}
{{ gdpr_lakehouse.k_anonymous_coverage_sql(ref(name), **gdpr_lakehouse.demo_retained_aggregate(name)) }}
{% if not loop.last %}union all{% endif %}
{% endfor %}
{% if not names %}
{{ gdpr_lakehouse.problems_as_rows([], ['relation_name', 'cell', 'problem']) }}
{% endif %}
