{{ config(materialized='ephemeral') }}

{#- The vault's keys for the models that encrypt and decrypt: each as the vault stores
    it (wrapped by the key-encryption key when the envelope is on). encrypt_pii,
    decrypt_pii and keyed_hash open it inside the engine; no statement holds a subject's
    key in clear. -#}
with vault as (
    select
        subject_id,
        subject_pseudonym,
        data_key
    from {{ ref('privacy_subject_keys') }}
)

select * from vault
