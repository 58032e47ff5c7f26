{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false) }}

{#- Filled by gdpr_erase when a subject's erasure completes; never rebuilt. -#}
with empty as (
    select
        cast(null as string) as subject_hash,
        cast(null as string) as request_id,
        cast(null as timestamp) as erased_at
)

select * from empty
where false
