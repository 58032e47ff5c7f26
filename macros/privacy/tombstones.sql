{#
    Tombstones: subjects whose erasure is complete, recorded as a keyed hash, never the
    raw id (privacy.erasure_tombstones). The hash key is the vault's reserved system row
    (subject_id '__tombstone__'), which erasure never deletes. Ingestion, the vault and
    --full-refresh rebuilds skip any subject whose hash is there.
#}
{% macro tombstone_key_id() -%}
    {{ return('__tombstone__') }}
{%- endmacro %}

{% macro tombstone_hash(id_expr, vault=none) -%}
    sha2(concat(
        (select {{ gdpr_lakehouse.unwrap_key('data_key') }} from {{ vault or ref('privacy_subject_keys') }}
         where subject_id = '{{ gdpr_lakehouse.tombstone_key_id() }}'),
        encode({{ id_expr }}, 'utf-8')), 256)
{%- endmacro %}

{#- A filter: keep only rows whose subject has no tombstone. -#}
{% macro not_tombstoned(id_expr, vault=none) -%}
    not exists (
        select 1 from {{ ref('privacy_erasure_tombstones') }} as tombstones
        where tombstones.subject_hash = {{ gdpr_lakehouse.tombstone_hash(id_expr, vault) }}
    )
{%- endmacro %}
