{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- Legal holds: subjects whose records a law requires keeping; gdpr_erase holds their
    requests instead of erasing. Written by the legal_hold operation; never rebuilt. -#}
with empty as (
    select
        cast(null as string) as subject_id,
        cast(null as string) as reason,
        cast(null as string) as placed_by,
        cast(null as timestamp) as placed_at,
        cast(null as string) as released_by,
        cast(null as timestamp) as released_at,
        cast(null as date) as review_on,
        cast(null as date) as subject_notified_on
)

select * from empty
where false
