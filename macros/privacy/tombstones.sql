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
    {{ return('__tombstone__') }}
{%- endmacro %}

{#- The tombstone key, as a scalar: exactly one row or an error (raise_error), so a lost,
    replaced or duplicated key can never make not_tombstoned() true for everyone. -#}
{% macro tombstone_key(keys=none) -%}
    {%- set keys = keys or ref('privacy_system_keys') -%}
    (select case when count(*) = 1 then max(key_value)
                 else raise_error(concat('{{ keys }} holds ', cast(count(*) as string),
                     ' tombstone keys, and exactly one is needed to recognise erased subjects. Nothing was written. '
                     'Recover the key: RESTORE TABLE {{ keys }} TO VERSION AS OF <v> (DESCRIBE HISTORY {{ keys }})'))
            end
     from {{ keys }} where key_name = 'tombstone')
{%- endmacro %}

{% macro tombstone_hash(id_expr, keys=none) -%}
    sha2(concat({{ gdpr_lakehouse.tombstone_key(keys) }}, encode({{ id_expr }}, 'utf-8')), 256)
{%- endmacro %}

{#- A filter: keep only rows whose subject has no tombstone. -#}
{% macro not_tombstoned(id_expr, keys=none) -%}
    not exists (
        select 1 from {{ ref('privacy_erasure_tombstones') }} as tombstones
        where tombstones.subject_hash = {{ gdpr_lakehouse.tombstone_hash(id_expr, keys) }}
    )
{%- endmacro %}

{#- The subject id, or null when the subject is tombstoned: for relations that keep an
    erased subject's rows anonymized (on_erasure: anonymize). -#}
{% macro unless_tombstoned(id_expr, keys=none) -%}
    case when {{ gdpr_lakehouse.not_tombstoned(id_expr, keys) }} then {{ id_expr }} end
{%- endmacro %}

{#- Before privacy.system_keys is (re)built: with the table there, it must hold exactly
    one tombstone key; without it, tombstones may only exist if the vault still has the
    old reserved row to carry over (returned, the relation to read it from). Otherwise
    stop: a new key would not match one tombstone, and every erased subject still in
    landing would come back. -#}
{% macro check_system_keys(existing) -%}
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

{#- Tombstones of older lakehouses held the subject's pseudonym in clear, which joined
    with the request log (subject id, request id) mapped every erased person to the
    pseudonym that keys their history. Hash such rows under the tombstone key and drop
    the clear value (the purge job then rewrites the old files). Idempotent; runs before
    anything reads the hashes (heal_interrupted_restores: gdpr_erase, restore_version)
    and after each build of the tombstones (their post-hook). -#}
{% macro unlink_tombstones(tombstones, system_keys=none) -%}
    {%- if execute -%}
        {%- set columns = adapter.get_columns_in_relation(tombstones) | map(attribute='name') | map('lower') | list -%}
        {%- if 'pseudonym_hash' not in columns -%}
            {%- do run_query("alter table " ~ tombstones ~ " add columns (pseudonym_hash string)") -%}
        {%- endif -%}
        {%- if gdpr_lakehouse.scalar_query("select count(*) from " ~ tombstones ~ " where subject_pseudonym is not null", 0) | int > 0 -%}
            {#- the tombstones' own post-hook cannot ref() the system keys (they read the
                tombstones): looked up here, and a missing table stops the hashing -#}
            {%- set system_keys = system_keys or gdpr_lakehouse._control_relation('privacy_system_keys') -%}
            {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='unlink_tombstones')) -%}
            {%- do run_query("update " ~ tombstones ~ " set pseudonym_hash = coalesce(pseudonym_hash, "
                ~ gdpr_lakehouse.tombstone_hash('subject_pseudonym', keys=system_keys) ~ "), subject_pseudonym = null where subject_pseudonym is not null") -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
