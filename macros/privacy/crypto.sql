{#
    Crypto-shredding primitives. Every direct identifier is stored encrypted (AES-256-GCM,
    a fresh random IV per value) with its subject's own data key from the vault
    (privacy.subject_keys); pseudonyms are keyed hashes of the subject id under the same
    key. Deleting the key makes every encrypted copy of the subject's data that history
    still holds unreadable at once (older versions of bronze keep the raw id until the
    purge job has run). No key material is ever written into SQL:
    keys are joined from the vault, and the optional key-encryption key is read by the
    engine at query time (java.lang.System.getenv; secret() on Databricks), never by
    dbt and never substituted into SQL text, so no statement, view text, log or error
    message holds it. Any SQL session of a process that holds the KEK can read it the
    same way: on the local and thrift targets this is no security boundary (README,
    "Who can read what").
#}

{#- 32 bytes from java.security.SecureRandom: the IVs of three AES-GCM encryptions
    (12 random bytes each). Spark's rand()/uuid() are not cryptographically secure;
    aes_encrypt draws its IV from SecureRandom. The per-row input keeps the optimizer
    from folding the calls into one constant. -#}
{% macro new_data_key(row_expr) -%}
    {{ return(adapter.dispatch('new_data_key', 'gdpr_lakehouse')(row_expr)) }}
{%- endmacro %}

{% macro default__new_data_key(row_expr) -%}
    substring(concat(
        {%- for part in range(3) %}
        substring(aes_encrypt(encode(concat({{ row_expr }}, ':{{ part }}'), 'utf-8'), x'00000000000000000000000000000000', 'GCM'), 1, 12){{ ',' if not loop.last }}
        {%- endfor %}
    ), 1, 32)
{%- endmacro %}

{#- Envelope: data keys stored wrapped by a key-encryption key (hex, 64 characters)
    that Spark reads from the environment variable named by var kek_env_var (default
    LAKEHOUSE_KEK). Whether the envelope is on is a property of the lakehouse, not of a
    command: macro key_envelope(). -#}
{% macro wrap_key(key_expr) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        aes_encrypt({{ key_expr }}, {{ gdpr_lakehouse._kek() }}, 'GCM')
    {%- else -%}
        {{ key_expr }}
    {%- endif -%}
{%- endmacro %}

{#- required=false for a view that consumers query: where their process has no KEK the
    keys read as NULL (identifiers masked or NULL) instead of failing the query. The
    pipeline's own statements keep required=true: a missing KEK stops them, it never
    encrypts with a NULL key. -#}
{% macro unwrap_key(stored_expr, required=true) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        {%- if required -%}
            aes_decrypt({{ stored_expr }}, {{ gdpr_lakehouse._kek() }}, 'GCM')
        {%- else -%}
            try_aes_decrypt({{ stored_expr }}, {{ gdpr_lakehouse._kek(required=false) }}, 'GCM')
        {%- endif -%}
    {%- else -%}
        {{ stored_expr }}
    {%- endif -%}
{%- endmacro %}

{#- The lakehouse's key mode (true: envelope on). Recorded on the vault when it is made
    (table property gdpr_lakehouse.key_envelope, post-hook record_key_envelope); a vault
    made before the property existed is read from its keys (32 bytes: plain; 60: a
    wrapped key, IV + key + tag). Only a new lakehouse (no vault yet, or an empty one)
    takes var key_envelope. A var that disagrees with the record is an error: a command
    run in the wrong mode would derive keys from the wrong bytes. -#}
{% macro key_envelope() -%}
    {%- set asked = gdpr_lakehouse._flag_var('key_envelope') -%}
    {#- parse, and `dbt compile` (which writes nothing and may run offline, as the unit
        tests of the Databricks macros do), render with the var alone -#}
    {%- set recorded = gdpr_lakehouse._recorded_key_envelope()
        if execute and flags.WHICH in ('run', 'build', 'test', 'seed', 'snapshot', 'run-operation', 'retry') else none -%}
    {%- if recorded is none -%}
        {{ return(asked or false) }}
    {%- elif asked is not none and asked != recorded -%}
        {%- do exceptions.raise_compiler_error("var key_envelope is " ~ (asked | string | lower) ~ " but this lakehouse's vault was made with key_envelope "
            ~ (recorded | string | lower) ~ " (recorded on privacy.subject_keys as gdpr_lakehouse.key_envelope); nothing was run. "
            ~ "Drop the var: every command reads the mode from the vault") -%}
    {%- else -%}
        {{ return(recorded) }}
    {%- endif -%}
{%- endmacro %}

{#- The vault's recorded mode: true, false, or none (no vault, or no key to tell by). -#}
{% macro _recorded_key_envelope() -%}
    {%- set vault = gdpr_lakehouse._vault_relation() -%}
    {%- if vault is none -%}{{ return(none) }}{%- endif -%}
    {%- set recorded = gdpr_lakehouse.tblproperties_of(vault).get('gdpr_lakehouse.key_envelope') -%}
    {%- if recorded is not none -%}
        {%- if recorded not in ('true', 'false') -%}
            {%- do exceptions.raise_compiler_error(vault ~ " records gdpr_lakehouse.key_envelope = " ~ recorded[:20]
                ~ "; it must be true or false. Set it back with ALTER TABLE ... SET TBLPROPERTIES") -%}
        {%- endif -%}
        {{ return(recorded == 'true') }}
    {%- endif -%}
    {%- set lengths = run_query("select distinct length(data_key) from " ~ vault ~ " where left(subject_id, 2) != '__'").columns[0].values() | list -%}
    {%- if lengths | length == 0 -%}{{ return(none) }}{%- endif -%}
    {%- if lengths | length > 1 or lengths[0] | int not in (32, 60) -%}
        {%- do exceptions.raise_compiler_error(vault ~ " holds keys of " ~ lengths | join(', ') ~ " bytes: neither all plain (32) nor all wrapped (60); "
            ~ "the key mode cannot be told. Nothing was run") -%}
    {%- endif -%}
    {{ return(lengths[0] | int == 60) }}
{%- endmacro %}

{% macro _vault_relation() -%}
    {%- set node = gdpr_lakehouse.engine_node('privacy_subject_keys') -%}
    {{ return(adapter.get_relation(database=none, schema=node.schema, identifier=node.alias)) }}
{%- endmacro %}

{#- Post-hook of the vault: record the mode it was made in, once. -#}
{% macro record_key_envelope(vault) -%}
    {%- if execute -%}
        {%- if 'gdpr_lakehouse.key_envelope' not in gdpr_lakehouse.tblproperties_of(vault) -%}
            {%- set mode = gdpr_lakehouse.key_envelope() -%}
            {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='build')) -%}
            {%- do run_query("alter table " ~ vault ~ " set tblproperties ('gdpr_lakehouse.key_envelope' = '" ~ (mode | string | lower) ~ "')") -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{#- Before a command writes anything: the vars agree with the lakehouse's key mode, the
    vault's keys agree with the record, and with the envelope on the key-encryption key
    is there. on-run-start of every dbt run/build/test and first step of the
    operations. -#}
{% macro assert_key_envelope() -%}
    {%- if execute -%}
        {%- set mode = gdpr_lakehouse.key_envelope() -%}
        {%- set vault = gdpr_lakehouse._vault_relation() -%}
        {%- if vault is not none -%}
            {%- set expected = 60 if mode else 32 -%}
            {%- set odd = gdpr_lakehouse.scalar_query("select count(*) from " ~ vault ~ " where left(subject_id, 2) != '__' and length(data_key) != " ~ expected, 0) | int -%}
            {%- if odd > 0 -%}
                {%- do exceptions.raise_compiler_error(vault ~ " is recorded with key_envelope " ~ (mode | string | lower) ~ " but " ~ odd
                    ~ " of its keys are not " ~ expected ~ " bytes long (" ~ ('wrapped' if mode else 'plain') ~ "); the vault is inconsistent. Nothing was run") -%}
            {%- endif -%}
        {%- endif -%}
        {%- if mode -%}{%- set kek = gdpr_lakehouse._kek() -%}{%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{#- The key-encryption key as a binary expression, read by the engine when the statement
    runs. required (the pipeline's statements): a missing KEK raises. Otherwise (the
    masked views, queried by consumers) it is NULL where the reading process has none. -#}
{% macro _kek(required=true) -%}
    {{ return(adapter.dispatch('_kek', 'gdpr_lakehouse')(required)) }}
{%- endmacro %}

{#- Spark, local or thrift: the environment variable named by var kek_env_var, read by
    java_method in each Spark process that evaluates the statement (the driver locally;
    on a cluster the executors too, so every worker's environment must hold it). Never
    `${env:...}`: substitution would put the key into the statement's text, and from
    there into view text in the metastore, logs and error messages. The profiles turn
    substitution off (spark.sql.variable.substitute). -#}
{% macro default___kek(required=true) -%}
    {%- set name = var('kek_env_var', 'LAKEHOUSE_KEK') -%}
    {%- if not modules.re.match('^[A-Z][A-Z0-9_]{0,63}$', name) -%}
        {%- do exceptions.raise_compiler_error("var kek_env_var " ~ name[:64] ~ " must be an environment variable name (A-Z, 0-9, _)") -%}
    {%- endif -%}
    {%- if execute and required and not modules.re.match('^[0-9a-fA-F]{64}$', env_var(name, '')) -%}
        {%- do exceptions.raise_compiler_error("key_envelope is on but the environment variable " ~ name
            ~ " is not a 256-bit key in hex (64 characters); set it or turn key_envelope off") -%}
    {%- endif -%}
    {%- set read = "unhex(java_method('java.lang.System', 'getenv', '" ~ name ~ "'))" -%}
    {%- if required -%}
        coalesce({{ read }}, raise_error('the key-encryption key is not in the environment variable {{ name }} of this Spark process; nothing was written'))
    {%- else -%}
        {{ read }}
    {%- endif -%}
{%- endmacro %}

{#- Databricks: the key-encryption key is a secret in a secret scope (backed by Azure
    Key Vault), read by secret() inside the warehouse: never in SQL text, never in dbt's
    process. Vars kek_secret_scope (default gdpr_lakehouse) and kek_secret_key (kek).
    secret() is checked against the principal running the query; the masked views use
    try_secret(), so a consumer without READ on the scope gets masked values, not an
    error. -#}
{% macro databricks___kek(required=true) -%}
    {%- set scope = var('kek_secret_scope', 'gdpr_lakehouse') | string -%}
    {%- set key = var('kek_secret_key', 'kek') | string -%}
    {%- for name, value in [('kek_secret_scope', scope), ('kek_secret_key', key)] -%}
        {%- if not modules.re.match('^[A-Za-z0-9_.-]{1,128}$', value) -%}
            {%- do exceptions.raise_compiler_error("var " ~ name ~ " " ~ value[:64]
                ~ " is not a secret scope or key name: allowed are letters, digits, _ . - (128 at most)") -%}
        {%- endif -%}
    {%- endfor -%}
    unhex({{ 'secret' if required else 'try_secret' }}('{{ scope }}', '{{ key }}'))
{%- endmacro %}

{#- AES-256-GCM with the subject's key; NULL stays NULL. -#}
{% macro encrypt_pii(value_expr, key_expr) -%}
    aes_encrypt(encode(cast({{ value_expr }} as string), 'utf-8'), {{ key_expr }}, 'GCM')
{%- endmacro %}

{#- NULL when the key is gone (shredded) or wrong. -#}
{% macro decrypt_pii(cipher_expr, key_expr) -%}
    cast(try_aes_decrypt({{ cipher_expr }}, {{ key_expr }}, 'GCM') as string)
{%- endmacro %}

{#- A subject's pseudonym: SHA-256 over its 256-bit key and id. Without the key it
    cannot be recomputed from an id, so a shredded subject is unlinkable. -#}
{% macro pseudonym(key_expr, id_expr) -%}
    sha2(concat({{ key_expr }}, encode({{ id_expr }}, 'utf-8')), 256)
{%- endmacro %}
