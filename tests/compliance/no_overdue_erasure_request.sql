{{ config(tags=['compliance']) }}
{#- No open erasure request (pending, erasing, failed) is past its deadline. -#}
{{ gdpr_lakehouse.overdue_requests_sql(ref('privacy_erasure_requests')) }}
