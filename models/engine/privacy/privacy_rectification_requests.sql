{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- Rectification requests (GDPR Art. 16): written by the rectification job
    (python -m python_jobs.rectify), one row per request; never rebuilt. The names of
    the columns changed are kept, never their values. -#}
with empty as (
    select
        cast(null as string) as request_id,
        cast(null as string) as subject_id,
        cast(null as string) as subject_type,
        cast(null as string) as requested_by,
        cast(null as timestamp) as received_at,
        cast(null as timestamp) as deadline,
        cast(null as string) as status,
        cast(null as string) as status_reason,
        cast(null as string) as landing_table,
        cast(null as string) as columns_changed,
        cast(null as string) as landing_file,
        cast(null as timestamp) as event_source_ts,
        cast(null as string) as applied_in,
        cast(null as bigint) as applied_version,
        cast(null as timestamp) as completed_at,
        cast(null as timestamp) as updated_at,
        cast(null as int) as deadline_extension,
        cast(null as string) as extension_reason,
        cast(null as date) as subject_informed_on
)

select * from empty
where false
