{{ config(tags=['compliance'], enabled=gdpr_lakehouse.demo_enabled()) }}
-- depends_on: {{ ref('privacy_system_keys') }}
-- depends_on: {{ ref('privacy_subject_keys') }}
-- depends_on: {{ ref('silver_patients') }}
-- depends_on: {{ ref('silver_users') }}
-- depends_on: {{ ref('silver_clicks') }}
-- depends_on: {{ ref('silver_encounters') }}
-- depends_on: {{ ref('snapshots_patients') }}
{# The demo's silver and snapshot PII (quasi-identifiers such as the birth year, and an
   encounter's diagnosis and cost, included) is never plaintext and opens with no key
   but the subject's own: once the key is shredded, no version of these tables can be
   read back to the person. It depends on the tables it reads, so `dbt build` checks them after rebuilding them. #}
{{ gdpr_lakehouse.bronze_pii_problems_sql(gdpr_lakehouse.bronze_pii_specs_from_graph(['silver', 'snapshots']) if execute else []) }}
