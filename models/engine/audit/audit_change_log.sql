{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- The audit log: one row per (relation, commit version, change type) of every relation
    whose Change Data Feed is on. Written only by `python -m python_jobs.audit_stream`;
    dbt owns the table (schema, properties, docs, tests) and never rebuilds it. -#}
with empty as (
    select
        cast(null as string) as relation,
        cast(null as string) as node,
        cast(null as bigint) as commit_version,
        cast(null as timestamp) as commit_timestamp,
        cast(null as string) as change_type,
        cast(null as bigint) as row_count,  -- noqa: RF04
        cast(null as string) as operation,  -- noqa: RF04
        cast(null as map <string, string>) as operation_parameters,
        cast(null as string) as user_metadata,
        cast(null as string) as actor,
        cast(null as string) as tool,
        cast(null as string) as purpose,
        cast(null as string) as count_source,
        cast(null as timestamp) as audited_at
)

select * from empty
where false
