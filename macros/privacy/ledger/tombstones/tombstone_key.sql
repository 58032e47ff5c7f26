{#- The tombstone key, as a scalar: exactly one row or an error (raise_error), so a lost,
    replaced or duplicated key can never make not_tombstoned() true for everyone. -#}
{% macro tombstone_key(keys=none) -%}
    {{ return(adapter.dispatch('tombstone_key', 'gdpr_lakehouse')(keys)) }}
{%- endmacro %}

{% macro spark__tombstone_key(keys=none) -%}
    {%- set keys = keys or ref('privacy_system_keys') -%}
    (select case when count(*) = 1 then max(key_value)
                 else raise_error(concat('{{ keys }} holds ', cast(count(*) as string),
                     ' tombstone keys, and exactly one is needed to recognise erased subjects. Nothing was written. '
                     'Recover the key: RESTORE TABLE {{ keys }} TO VERSION AS OF <v> (DESCRIBE HISTORY {{ keys }})'))
            end
     from {{ keys }} where key_name = 'tombstone')
{%- endmacro %}
