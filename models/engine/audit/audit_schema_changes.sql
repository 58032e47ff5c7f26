{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- The schema history: one row per schema or table-property change of every declared
    relation, from the metaData actions of its Delta log. Written only by
    `python -m python_jobs.audit_stream` (python_jobs.schema_history); dbt owns the
    table and never rebuilds it. -#}
with empty as (
    select
        cast(null as string) as relation,
        cast(null as string) as node,
        cast(null as bigint) as commit_version,
        cast(null as timestamp) as commit_timestamp,
        cast(null as string) as change,  -- noqa: RF04
        cast(null as string) as name,  -- noqa: RF04
        cast(null as string) as before,  -- noqa: RF04
        cast(null as string) as after,  -- noqa: RF04
        cast(null as string) as operation,  -- noqa: RF04
        cast(null as string) as user_metadata,
        cast(null as string) as actor,
        cast(null as string) as tool,
        cast(null as string) as purpose,
        cast(null as timestamp) as audited_at
)

select * from empty
where false
