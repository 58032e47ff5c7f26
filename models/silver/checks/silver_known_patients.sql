{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='ephemeral') }}

{#- Patients bronze knows, with their pseudonym: what encounters are checked against. -#}
with patients as (
    select patient_id from {{ ref('bronze_patients') }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
)

select
    patients.patient_id,
    vault.subject_pseudonym
from patients
inner join vault on patients.patient_id = vault.subject_id
