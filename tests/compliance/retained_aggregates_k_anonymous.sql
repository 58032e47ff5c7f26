{{ config(tags=['compliance']) }}
{# No version of a retained aggregate that its history still holds publishes a cell of
   fewer than var k_anonymity data subjects (macro k_anonymity_problems). #}
{% if gdpr_lakehouse.demo_enabled() %}
-- depends_on: {{ ref('gold_encounters_monthly') }}
-- depends_on: {{ ref('gold_clicks_hourly') }}
-- depends_on: {{ ref('gold_patients_by_city') }}
{% endif %}
{{ gdpr_lakehouse.problems_as_rows(gdpr_lakehouse.k_anonymity_problems(), ['relation_name', 'version', 'problem']) }}
