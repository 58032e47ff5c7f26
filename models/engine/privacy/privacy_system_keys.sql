{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        full_refresh=false,
        post_hook=["{{ gdpr_lakehouse.wrap_system_keys(this) }}"],
    )
}}

{#-
    The lakehouse's own keys, apart from the subjects' (privacy.subject_keys): one row,
    `tombstone`, the key of the hashes in privacy.erasure_tombstones. No subject's, so
    never erased or shredded; append-only and never rebuilt (full_refresh=false); its
    history is kept 30 days, so a lost row is recovered with Delta's RESTORE. Stored
    like the data keys: wrapped by the key-encryption key when the envelope is on
    (macro tombstone_key unwraps it inside each statement), so a reader of this table
    cannot recompute a tombstone hash or an anonymous record id. A key stored plain by
    an older version is wrapped by the post-hook (wrap_system_keys).

    Fail closed: while tombstones exist, a missing or duplicated key stops the build
    (macro check_system_keys) instead of minting a new key, which would let every erased
    subject back in. A lakehouse made before this table existed keeps its tombstone key:
    it is taken from the vault's reserved row.
-#}
-- depends_on: {{ ref('privacy_erasure_tombstones') }}
{%- set legacy = gdpr_lakehouse.check_system_keys(this if is_incremental() else none) -%}

{% if is_incremental() %}
select
    cast(null as string) as key_name,
    cast(null as binary) as key_value,
    cast(null as timestamp) as created_at
where false
{% else %}
with minted as (
    select
        'tombstone' as key_name,
        {% if legacy -%}
        (
            {#- stored as the vault stores its keys: in this lakehouse's mode -#}
            select legacy.data_key
            from {{ legacy }} as legacy
            where legacy.subject_id = '{{ gdpr_lakehouse.tombstone_key_id() }}'
        )
        {%- else -%}
        {{ gdpr_lakehouse.wrap_key(gdpr_lakehouse.new_data_key("'tombstone'"), gdpr_lakehouse.key_binding(system_key='tombstone')) }}
        {%- endif %} as key_value,
        current_timestamp() as created_at
)

select * from minted
{% endif %}
