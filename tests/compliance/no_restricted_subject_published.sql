{{ config(tags=['compliance']) }}
{#- No restricted subject is published (GDPR Art. 18): in every model the consumers read
    (meta audience: consumers) that has a subject key, the rows of a subject whose
    processing is restricted (restrict_processing) or who is under a legal hold. Fails
    on a published model that lets one in (one without not_restricted). -#}
-- depends_on: {{ ref('privacy_restrictions') }}
-- depends_on: {{ ref('privacy_legal_holds') }}
-- depends_on: {{ ref('privacy_subject_keys') }}
{{ gdpr_lakehouse.restricted_published_sql(gdpr_lakehouse.published_subject_models() if execute else []) }}
