{{ config(tags=['compliance']) }}
{#- No erased request is past its purge deadline (erased_at + var purge_deadline_days):
    the old files that still hold its subject must be gone by then (python -m python_jobs.purge). -#}
{{ gdpr_lakehouse.unpurged_requests_sql(ref('privacy_erasure_requests')) }}
