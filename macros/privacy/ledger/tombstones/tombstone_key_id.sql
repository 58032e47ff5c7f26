{#
    Tombstones: subjects whose erasure is complete, recorded as a keyed hash, never the
    raw id (privacy.erasure_tombstones). The hash key is the lakehouse's `tombstone` key
    in privacy.system_keys, apart from the subjects' keys and the key mode. Ingestion,
    the vault and --full-refresh rebuilds skip (or anonymize) any subject whose hash is
    there. Every use fails closed: without exactly one tombstone key the statement stops
    with an error, it never compares against NULL.
#}

{#- The vault's reserved row of lakehouses made before privacy.system_keys: its key is
    carried over once, so old tombstones keep matching. Never a subject id (refused by
    _validate_subject_ids, like every id that starts with __). -#}
{% macro tombstone_key_id() -%}
    {{ return(adapter.dispatch('tombstone_key_id', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__tombstone_key_id() -%}
    {{ return('__tombstone__') }}
{%- endmacro %}
