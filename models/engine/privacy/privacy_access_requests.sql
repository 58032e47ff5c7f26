{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- Access and portability requests (GDPR Art. 15 and 20): written by the subject access
    job (python -m python_jobs.subject_access), one row per request; never rebuilt. -#}
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
        cast(null as int) as relations_exported,
        cast(null as bigint) as rows_exported,
        cast(null as string) as export_path,
        cast(null as string) as package_sha256,
        cast(null as timestamp) as completed_at,
        cast(null as timestamp) as export_deleted_at,
        cast(null as timestamp) as updated_at,
        cast(null as int) as deadline_extension,
        cast(null as string) as extension_reason,
        cast(null as date) as subject_informed_on
)

select * from empty
where false
