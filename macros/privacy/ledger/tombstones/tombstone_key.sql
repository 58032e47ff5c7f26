{#- The tombstone key, as a scalar subquery over privacy.system_keys (or `keys`):
    exactly one row or an error (raise_error), so a lost, replaced or duplicated key can
    never make not_tombstoned() true for everyone. With
    the envelope on (var key_envelope, recorded on the vault) it is stored wrapped by the
    key-encryption key like every data key, and stays wrapped: keyed_hash, encrypt_pii
    and decrypt_pii open it inside the engine, so a reader of the table cannot
    recompute a tombstone hash or an anonymous record id, and no statement returns the
    key. A key stored in the other mode stops the statement too. -#}
{% macro tombstone_key(keys=none) -%}
    {{ return(adapter.dispatch('tombstone_key', 'gdpr_lakehouse')(keys)) }}
{%- endmacro %}

{% macro spark__tombstone_key(keys=none) -%}
    {%- set keys = keys or ref('privacy_system_keys') -%}
    {%- set envelope = gdpr_lakehouse.key_envelope() -%}
    (select case when count(*) != 1
                 then raise_error(concat('{{ keys }} holds ', cast(count(*) as string),
                     ' tombstone keys, and exactly one is needed to recognise erased subjects. Nothing was written. '
                     'Recover the key: RESTORE TABLE {{ keys }} TO VERSION AS OF <v> (DESCRIBE HISTORY {{ keys }})'))
                 when length(max(key_value)) != {{ 60 if envelope else 32 }}
                 then raise_error('{{ keys }} holds the tombstone key {{ "unwrapped, though this lakehouse wraps its keys (key_envelope): dbt build --select privacy_system_keys wraps it" if envelope else "wrapped, though this lakehouse keeps its keys plain (key_envelope off)" }}. Nothing was written.')
                 else max(key_value)
            end
     from {{ keys }} where key_name = 'tombstone')
{%- endmacro %}
