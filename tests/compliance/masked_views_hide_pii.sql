{{ config(tags=['compliance']) }}
{#- Every masked view (a view declaring pii_columns) shows a principal who is not a
    PII reader only masks: null, '***' or '***@<domain>'. #}
{%- if gdpr_lakehouse.demo_enabled() %}
-- depends_on: {{ ref('privacy_patients_masked') }}
-- depends_on: {{ ref('privacy_users_masked') }}
{%- endif %}
{{ gdpr_lakehouse.unmasked_pii_sql(gdpr_lakehouse.masked_views_from_graph() if execute else []) }}
