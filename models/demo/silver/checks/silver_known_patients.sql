{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='ephemeral') }}

{#- Patients bronze knows, by pseudonym: what encounters are checked against. -#}
select patients.patient_pseudonym as subject_pseudonym
from {{ ref('bronze_patients') }} as patients
