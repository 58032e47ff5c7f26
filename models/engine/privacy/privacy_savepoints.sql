{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- The savepoints: one row per savepoint `dbt run-operation savepoint` made, written
    before its copy (status creating), kept once the erasures made since its version
    are re-applied to the copy (kept), released when release_savepoint has dropped the
    copy (released). gdpr_erase erases from every copy not released, purge purges it,
    forensic_scan scans it. -#}
with empty as (
    select
        cast(null as string) as savepoint_name,
        cast(null as string) as node,
        cast(null as string) as relation,
        cast(null as string) as savepoint_relation,
        cast(null as bigint) as source_version,
        cast(null as timestamp) as source_timestamp,
        cast(null as string) as business_date,
        cast(null as string) as restore_id,
        cast(null as string) as status,
        cast(null as string) as reason,
        cast(null as string) as actor,
        cast(null as timestamp) as created_at,
        cast(null as string) as released_by,
        cast(null as timestamp) as released_at
)

select * from empty
where false
