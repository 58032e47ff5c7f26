{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- Erasure requests (GDPR Art. 17 / CCPA): written by request_erasure and gdpr_erase,
    one row per request and subject; never rebuilt. -#}
with empty as (
    select
        cast(null as string) as request_id,
        cast(null as string) as subject_id,
        cast(null as string) as subject_type,
        cast(null as string) as subject_pseudonym,
        cast(null as string) as reason,
        cast(null as string) as requested_by,
        cast(null as timestamp) as received_at,
        cast(null as timestamp) as deadline,
        cast(null as string) as status,
        cast(null as string) as status_reason,
        cast(null as string) as batch_id,
        cast(null as timestamp) as shredded_at,
        cast(null as timestamp) as erased_at,
        cast(null as timestamp) as purged_at,
        cast(null as timestamp) as updated_at,
        cast(null as int) as deadline_extension,
        cast(null as string) as extension_reason,
        cast(null as date) as subject_informed_on
)

select * from empty
where false
