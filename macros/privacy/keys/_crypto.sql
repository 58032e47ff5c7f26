{% macro _vault_relation() -%}
    {%- set node = gdpr_lakehouse.engine_node('privacy_subject_keys') -%}
    {{ return(adapter.get_relation(database=none, schema=node.schema, identifier=node.alias)) }}
{%- endmacro %}

{#- Where the engine finds the key-encryption key when a statement runs, as wrap_key,
    encrypt_pii, decrypt_pii and keyed_hash pass it on: on Spark the name of its environment variable (a SQL string),
    on Databricks the key, read from its secret scope inside the warehouse. required (the
    pipeline's statements): a missing KEK raises. Otherwise (the masked views, queried by
    consumers) the key reads as NULL where the reading process has none. -#}
{% macro _kek(required=true) -%}
    {{ return(adapter.dispatch('_kek', 'gdpr_lakehouse')(required)) }}
{%- endmacro %}

{#- Spark, local or thrift: never the key itself. The key-encryption key stays in the
    environment variable named by var kek_env_var of each Spark process that evaluates
    the statement (the driver locally; on a cluster the executors too), and only the
    functions of this project's Spark extension read it, inside the JVM
    (gdpr_lakehouse.sql.KeyEnvelopeExtension: gdpr_wrap_key, gdpr_encrypt,
    gdpr_decrypt, gdpr_try_decrypt, gdpr_keyed_hash, gdpr_key_opens), so no statement
    can return it or a key it unwraps; the extension also refuses
    reflection (java_method, reflect), which read it before. What this returns is the
    variable's name as a SQL string, for those functions. Never `${env:...}`:
    substitution would put the key into the statement's text (the profiles turn it
    off). -#}
{% macro spark___kek(required=true) -%}
    {%- set name = var('kek_env_var', 'LAKEHOUSE_KEK') -%}
    {%- if not modules.re.match('^[A-Z][A-Z0-9_]{0,63}$', name) -%}
        {%- do exceptions.raise_compiler_error("var kek_env_var " ~ name[:64] ~ " must be an environment variable name (A-Z, 0-9, _)") -%}
    {%- endif -%}
    {#- embedded Spark runs in dbt's own process, so dbt's environment is Spark's: say
        what is missing before anything runs. On a Thrift server (warm, thrift) the
        server's environment counts, and the function itself raises there. -#}
    {%- if execute and required and (target.method | default('session')) == 'session'
          and not modules.re.match('^[0-9a-fA-F]{64}$', env_var(name, '')) -%}
        {%- do exceptions.raise_compiler_error("this lakehouse wraps its keys with a key-encryption key (key_envelope), but the environment variable " ~ name
            ~ " is not a 256-bit key in hex (64 characters). On this machine, `python -m python_jobs.kek init` (run by make setup) keeps one in "
            ~ "~/.config/gdpr_lakehouse/kek and has this project's Python processes read it; else export " ~ name
            ~ " with the key this lakehouse was made with. Nothing was run") -%}
    {%- endif -%}
    {{ return("'" ~ name ~ "'") }}
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

{#- Databricks only: a stored key opened inside the warehouse with the secret scope's
    key (secret(), or try_secret() for a consumer without READ on it) and its binding
    (macro key_binding); the key itself where the envelope is off. Spark never opens a
    key in SQL: gdpr_encrypt, gdpr_decrypt and gdpr_keyed_hash take the wrapped key. -#}
{% macro _open_key(stored_expr, key_binding, required=true) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        {{ 'aes_decrypt' if required else 'try_aes_decrypt' }}({{ stored_expr }}, {{ gdpr_lakehouse._kek(required=required) }}, 'GCM', 'DEFAULT', {{ key_binding }})
    {%- else -%}
        {{ stored_expr }}
    {%- endif -%}
{%- endmacro %}

{#- Whether the key-encryption key opens a stored (wrapped) key with its binding (macro
    key_binding): true or false, never the key. -#}
{% macro _key_opens(stored_expr, key_binding) -%}
    {{ return(adapter.dispatch('_key_opens', 'gdpr_lakehouse')(stored_expr, key_binding)) }}
{%- endmacro %}

{% macro spark___key_opens(stored_expr, key_binding) -%}
    gdpr_key_opens({{ stored_expr }}, {{ key_binding }}, {{ gdpr_lakehouse._kek(required=false) }})
{%- endmacro %}

{% macro databricks___key_opens(stored_expr, key_binding) -%}
    ({{ gdpr_lakehouse._open_key(stored_expr, key_binding, required=false) }} is not null)
{%- endmacro %}

{#- What a ciphertext is bound to, as SQL bytes (its additional authenticated data): the
    owner (the subject's pseudonym; for the tombstone's own ciphertext its subject hash)
    and the name of the column that stores it. An empty binding is none: a lakehouse made
    before bindings (macro bind_ciphertexts). -#}
{% macro _cipher_binding(owner_expr, column) -%}
    {%- if not (column is string and modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}$', column)) -%}
        {%- do exceptions.raise_compiler_error("encrypt_pii/decrypt_pii: column " ~ (column | string)[:64]
            ~ " must be the name of the column that stores the ciphertext (letters, digits, _)") -%}
    {%- endif -%}
    {{ return("encode(concat(" ~ owner_expr ~ ", '/" ~ column | lower ~ "'), 'utf-8')") }}
{%- endmacro %}

{#- The record of bound keys and ciphertexts (table property
    gdpr_lakehouse.ciphertext_binding on the vault): subject keys bound to the subject's
    pseudonym, system keys to their name, values to their owner and column. -#}
{% macro _ciphertext_binding_version() -%}
    {{ return('subject_column_v1') }}
{%- endmacro %}

{#- Whether the vault's keys and the lakehouse's ciphertexts are bound: recorded, or a
    vault without a subject's key (nothing to bind; its post-hook records it). Read once
    per invocation once true. -#}
{% macro _ciphertexts_bound(vault) -%}
    {%- set cache = gdpr_lakehouse._invocation_cache() -%}
    {%- set cache_key = 'ciphertexts_bound ' ~ vault -%}
    {%- if cache_key in cache -%}{{ return(true) }}{%- endif -%}
    {%- set properties = cache.get('vault properties ' ~ vault) or gdpr_lakehouse.tblproperties_of(vault) -%}
    {%- set recorded = properties.get('gdpr_lakehouse.ciphertext_binding') -%}
    {%- if recorded is not none and recorded != gdpr_lakehouse._ciphertext_binding_version() -%}
        {%- do exceptions.raise_compiler_error(vault ~ " records gdpr_lakehouse.ciphertext_binding = " ~ recorded[:40] ~ "; this version reads "
            ~ gdpr_lakehouse._ciphertext_binding_version() ~ ". Nothing was run") -%}
    {%- endif -%}
    {%- set bound = recorded is not none or (gdpr_lakehouse.scalar_query("select count(*) from " ~ vault ~ " where left(subject_id, 2) != '__'", 0) | int) == 0 -%}
    {%- if bound and recorded is not none -%}{%- do cache.update({cache_key: true}) -%}{%- endif -%}
    {{ return(bound) }}
{%- endmacro %}

{#- A stored key bound to key_binding (macro bind_ciphertexts only): as it is when it
    opens with the binding, else wrapped again with it, opened without one (a lakehouse
    made before bindings); a key that opens neither way stops the statement. -#}
{% macro _bind_key(stored_expr, key_binding) -%}
    {{ return(adapter.dispatch('_bind_key', 'gdpr_lakehouse')(stored_expr, key_binding)) }}
{%- endmacro %}

{% macro spark___bind_key(stored_expr, key_binding) -%}
    gdpr_bind_key({{ stored_expr }}, {{ key_binding }}, {{ gdpr_lakehouse._kek() }})
{%- endmacro %}

{% macro databricks___bind_key(stored_expr, key_binding) -%}
    case when {{ gdpr_lakehouse._key_opens(stored_expr, key_binding) }} then {{ stored_expr }}
         else aes_encrypt(aes_decrypt({{ stored_expr }}, {{ gdpr_lakehouse._kek() }}, 'GCM'), {{ gdpr_lakehouse._kek() }}, 'GCM', 'DEFAULT', x'', {{ key_binding }}) end
{%- endmacro %}
