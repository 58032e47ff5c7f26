{{ config(tags=['compliance']) }}
-- depends_on: {{ ref('privacy_system_keys') }}
-- depends_on: {{ ref('privacy_subject_keys') }}
{# Every PII column of silver and the snapshots (quasi-identifiers such as the birth
   year included) is ciphertext that only the subject's own key opens: once the key is
   shredded, no version of these tables can be read back to the person. #}
{{ gdpr_lakehouse.bronze_pii_problems_sql(gdpr_lakehouse.bronze_pii_specs_from_graph(['silver', 'snapshots']) if execute else []) }}
