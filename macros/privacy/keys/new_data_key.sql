{#
    Crypto-shredding primitives. Every direct identifier is stored encrypted (AES-256-GCM,
    a fresh random IV per value) with its subject's own data key from the vault
    (privacy.subject_keys); pseudonyms are keyed hashes of the subject id under the same
    key. Deleting the key makes every encrypted copy of the subject's data that history
    still holds unreadable at once (older versions of bronze keep the raw id until the
    purge job has run). No key material is ever written into SQL:
    keys are joined from the vault, and the key-encryption key is read inside the
    engine when a statement runs (this project's Spark SQL extension on Spark; secret()
    on Databricks), never by dbt and never substituted into SQL text, so no statement,
    view text, log or error message holds it, and no statement can return it (the
    extension refuses reflection). A stored key is opened only inside the functions
    that use it (encrypt_pii, decrypt_pii, keyed_hash), so no statement returns a
    subject's key either: docs/concepts/README.md, "Who can read what".
#}

{#- 32 bytes from java.security.SecureRandom: the IVs of three AES-GCM encryptions
    (12 random bytes each). Spark's rand()/uuid() are not cryptographically secure;
    aes_encrypt draws its IV from SecureRandom. The per-row input keeps the optimizer
    from folding the calls into one constant. -#}
{% macro new_data_key(row_expr) -%}
    {{ return(adapter.dispatch('new_data_key', 'gdpr_lakehouse')(row_expr)) }}
{%- endmacro %}

{% macro spark__new_data_key(row_expr) -%}
    substring(concat(
        {%- for part in range(3) %}
        substring(aes_encrypt(encode(concat({{ row_expr }}, ':{{ part }}'), 'utf-8'), x'00000000000000000000000000000000', 'GCM'), 1, 12){{ ',' if not loop.last }}
        {%- endfor %}
    ), 1, 32)
{%- endmacro %}
