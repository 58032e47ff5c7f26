{{ config(materialized='ephemeral') }}

{#- The vault's keys ready to use: unwrapped from the key-encryption key when the
    envelope is on. Ephemeral, so unwrapped keys are never stored anywhere. -#}
with vault as (
    select
        subject_id,
        subject_pseudonym,
        {{ gdpr_lakehouse.unwrap_key('data_key') }} as data_key
    from {{ ref('privacy_subject_keys') }}
)

select * from vault
