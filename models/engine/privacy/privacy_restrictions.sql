{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- Restrictions of processing (GDPR Art. 18): subjects whose data is kept but not
    published (no per-subject gold row, not in the consumers' masked views) until the
    restriction is lifted. Written by the restrict_processing operation; never rebuilt.
    An active legal hold restricts too (macro restricted_subjects). -#}
with empty as (
    select
        cast(null as string) as subject_id,
        cast(null as string) as reason,
        cast(null as string) as placed_by,
        cast(null as timestamp) as placed_at,
        cast(null as string) as lifted_by,
        cast(null as timestamp) as lifted_at,
        cast(null as date) as review_on
)

select * from empty
where false
