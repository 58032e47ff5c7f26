{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- The restore log: one row per relation restore_version restored, written before the
    RESTORE (status restoring) and settled after the erasures were re-applied
    (reapplied), so a run that died between the two is found and healed by the next
    restore_version or gdpr_erase. -#}
with empty as (
    select
        cast(null as string) as restore_id,
        cast(null as string) as relation,
        cast(null as string) as node,
        cast(null as bigint) as version_before,
        cast(null as bigint) as target_version,
        cast(null as timestamp) as target_timestamp,
        cast(null as bigint) as restore_commit_version,
        cast(null as bigint) as reapply_commit_version,
        cast(null as bigint) as rows_restored,
        cast(null as bigint) as rows_reerased,
        cast(null as string) as status,
        cast(null as string) as reason,
        cast(null as string) as actor,
        cast(null as timestamp) as started_at,
        cast(null as timestamp) as finished_at,
        cast(null as string) as detail  -- noqa: RF04
)

select * from empty
where false
