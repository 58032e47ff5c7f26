{#
    Crypto-shredding primitives. Every direct identifier is stored encrypted (AES-256-GCM,
    a fresh random IV per value) with its subject's own data key from the vault
    (privacy.subject_keys); pseudonyms are keyed hashes of the subject id under the same
    key. Deleting the key makes every copy of the subject's data that history still
    holds unreadable and unlinkable at once. No key material is ever written into SQL:
    keys are joined from the vault, and the optional key-encryption key is read by Spark
    from the environment (${env:...} substitution), never by dbt.
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

{#- Envelope: with var key_envelope true, data keys are stored wrapped by a
    key-encryption key (hex, 64 characters) that Spark reads from the environment
    variable named by var kek_env_var (default LAKEHOUSE_KEK). -#}
{% macro wrap_key(key_expr) -%}
    {%- if var('key_envelope', false) -%}
        aes_encrypt({{ key_expr }}, {{ gdpr_lakehouse._kek() }}, 'GCM')
    {%- else -%}
        {{ key_expr }}
    {%- endif -%}
{%- endmacro %}

{% macro unwrap_key(stored_expr) -%}
    {%- if var('key_envelope', false) -%}
        aes_decrypt({{ stored_expr }}, {{ gdpr_lakehouse._kek() }}, 'GCM')
    {%- else -%}
        {{ stored_expr }}
    {%- endif -%}
{%- endmacro %}

{% macro _kek() -%}
    {{ return(adapter.dispatch('_kek', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro default___kek() -%}
    {%- set name = var('kek_env_var', 'LAKEHOUSE_KEK') -%}
    {%- if not modules.re.match('^[A-Z][A-Z0-9_]{0,63}$', name) -%}
        {%- do exceptions.raise_compiler_error("var kek_env_var " ~ name[:64] ~ " must be an environment variable name (A-Z, 0-9, _)") -%}
    {%- endif -%}
    {%- if execute and not modules.re.match('^[0-9a-fA-F]{64}$', env_var(name, '')) -%}
        {%- do exceptions.raise_compiler_error("key_envelope is on but the environment variable " ~ name
            ~ " is not a 256-bit key in hex (64 characters); set it or turn key_envelope off") -%}
    {%- endif -%}
    unhex('${env:{{ name }}}')
{%- endmacro %}

{#- Databricks: the key-encryption key is a secret in a secret scope (backed by Azure
    Key Vault), read by secret() inside the warehouse: never in SQL text, never in dbt's
    process. Vars kek_secret_scope (default gdpr_lakehouse) and kek_secret_key (kek). -#}
{% macro databricks___kek() -%}
    {%- set scope = var('kek_secret_scope', 'gdpr_lakehouse') | string -%}
    {%- set key = var('kek_secret_key', 'kek') | string -%}
    {%- for name, value in [('kek_secret_scope', scope), ('kek_secret_key', key)] -%}
        {%- if not modules.re.match('^[A-Za-z0-9_.-]{1,128}$', value) -%}
            {%- do exceptions.raise_compiler_error("var " ~ name ~ " " ~ value[:64]
                ~ " is not a secret scope or key name: allowed are letters, digits, _ . - (128 at most)") -%}
        {%- endif -%}
    {%- endfor -%}
    unhex(secret('{{ scope }}', '{{ key }}'))
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
