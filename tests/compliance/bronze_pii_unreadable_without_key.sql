{{ config(tags=['compliance']) }}
-- depends_on: {{ ref('privacy_system_keys') }}
-- depends_on: {{ ref('privacy_subject_keys') }}
{# Every PII column in bronze is ciphertext that only the subject's own key opens. #}
{{ gdpr_lakehouse.bronze_pii_problems_sql(gdpr_lakehouse.bronze_pii_specs_from_graph() if execute else []) }}
