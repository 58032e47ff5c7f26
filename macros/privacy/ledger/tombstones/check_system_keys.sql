{#- Before privacy.system_keys is (re)built: with the table there, it must hold exactly
    one tombstone key; without it, tombstones may only exist if the vault still has the
    old reserved row to carry over (returned, the relation to read it from). Otherwise
    stop: a new key would not match one tombstone, and every erased subject still in
    landing would come back. -#}
{% macro check_system_keys(existing) -%}
    {{ return(adapter.dispatch('check_system_keys', 'gdpr_lakehouse')(existing)) }}
{%- endmacro %}

{% macro spark__check_system_keys(existing) -%}
    {%- if execute -%}{{ return(gdpr_lakehouse._check_system_keys(existing)) }}{%- endif -%}
{%- endmacro %}

{% macro _check_system_keys(existing) -%}
    {%- set tombstones = adapter.get_relation(database=none, schema=ref('privacy_erasure_tombstones').schema,
        identifier=ref('privacy_erasure_tombstones').identifier) -%}
    {%- if existing is not none -%}
        {%- set keys = gdpr_lakehouse.scalar_query("select count(*) from " ~ existing ~ " where key_name = 'tombstone'", 0) | int -%}
        {%- if keys != 1 -%}
            {%- do exceptions.raise_compiler_error(existing ~ " holds " ~ keys ~ " tombstone keys; exactly one is needed to recognise erased "
                ~ "subjects, and minting a new one would let every erased subject back in. Nothing was written. Recover it: "
                ~ "RESTORE TABLE " ~ existing ~ " TO VERSION AS OF <v> (DESCRIBE HISTORY " ~ existing ~ ")") -%}
        {%- endif -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set vault_node = gdpr_lakehouse.engine_node('privacy_subject_keys') -%}
    {%- set vault = adapter.get_relation(database=none, schema=vault_node.schema, identifier=vault_node.alias) -%}
    {%- if vault is not none and gdpr_lakehouse.scalar_query("select count(*) from " ~ vault ~ " where subject_id = '"
          ~ gdpr_lakehouse.tombstone_key_id() ~ "'", 0) | int == 1 -%}
        {%- do log('privacy.system_keys: carrying the tombstone key over from the vault', info=true) -%}
        {{ return(vault) }}
    {%- endif -%}
    {%- set erased = gdpr_lakehouse.scalar_query("select count(*) from " ~ tombstones, 0) | int if tombstones is not none else 0 -%}
    {%- if erased > 0 -%}
        {%- do exceptions.raise_compiler_error("privacy.system_keys is missing its tombstone key while " ~ erased ~ " tombstone(s) exist: "
            ~ "a new key would match none of them and let every erased subject back in. Nothing was written. Recover the table "
            ~ "(RESTORE TABLE privacy.system_keys TO VERSION AS OF <v>, or from backup) before building") -%}
    {%- endif -%}
    {{ return(none) }}
{%- endmacro %}
