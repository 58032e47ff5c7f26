{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- Evidence of erasure: one row per request and relation, written by gdpr_erase (and
    the purge job): Delta versions before and after, rows the erasure commits removed
    (from their Change Data Feed), retries, shred and purge times. -#}
with empty as (
    select
        cast(null as string) as request_id,
        cast(null as string) as relation,
        cast(null as string) as node,
        cast(null as string) as action,  -- noqa: RF04
        cast(null as bigint) as version_before,
        cast(null as bigint) as version_after,
        cast(null as bigint) as rows_expected,
        cast(null as bigint) as rows_affected,
        cast(null as int) as attempts,
        cast(null as string) as status,
        cast(null as timestamp) as started_at,
        cast(null as timestamp) as erased_at,
        cast(null as timestamp) as reorg_at,
        cast(null as timestamp) as purged_at,
        cast(null as string) as detail  -- noqa: RF04
)

select * from empty
where false
