{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, on_schema_change='append_new_columns') }}

{#- Filled by gdpr_erase when it takes on a subject; never rebuilt. pseudonym_enc holds
    the subject's pseudonym, encrypted under the tombstone key, while its erasure runs.
    subject_pseudonym is always null (older lakehouses held it in clear; gdpr_erase and
    restore_version hash such rows into pseudonym_hash). -#}
with empty as (
    select
        cast(null as string) as subject_hash,
        cast(null as string) as request_id,
        cast(null as timestamp) as erased_at,
        cast(null as string) as subject_type,
        cast(null as string) as subject_pseudonym,
        cast(null as string) as pseudonym_hash,
        cast(null as binary) as pseudonym_enc
)

select * from empty
where false
