{#- AES-256-GCM with the subject's key as the vault stores it; NULL stays NULL. The
    ciphertext is bound to what it belongs to (additional authenticated data, macro
    _cipher_binding): owner_expr, the subject's pseudonym (the vault's subject_pseudonym
    of the row whose key is used), and column, the name of the column that stores it.
    Moved to another subject's row or another column, it does not open. key_binding: how
    the stored key is bound (default: the subject's, macro key_binding of owner_expr).
    With the key envelope on (Spark), gdpr_encrypt opens the wrapped key inside the JVM:
    no statement ever holds the subject's key. -#}
{% macro encrypt_pii(value_expr, key_expr, owner_expr, column, key_binding=none) -%}
    {{ return(adapter.dispatch('encrypt_pii', 'gdpr_lakehouse')(value_expr, key_expr, owner_expr, column, key_binding)) }}
{%- endmacro %}

{% macro spark__encrypt_pii(value_expr, key_expr, owner_expr, column, key_binding=none) -%}
    {%- set aad = gdpr_lakehouse._cipher_binding(owner_expr, column) -%}
    {%- set value = "encode(cast(" ~ value_expr ~ " as string), 'utf-8')" -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        gdpr_encrypt({{ value }}, {{ key_expr }}, {{ key_binding or gdpr_lakehouse.key_binding(owner_expr) }}, {{ aad }}, {{ gdpr_lakehouse._kek() }})
    {%- else -%}
        aes_encrypt({{ value }}, {{ key_expr }}, 'GCM', 'DEFAULT', x'', {{ aad }})
    {%- endif -%}
{%- endmacro %}

{% macro databricks__encrypt_pii(value_expr, key_expr, owner_expr, column, key_binding=none) -%}
    aes_encrypt(encode(cast({{ value_expr }} as string), 'utf-8'), {{ gdpr_lakehouse._open_key(key_expr, key_binding or gdpr_lakehouse.key_binding(owner_expr)) }}, 'GCM', 'DEFAULT', x'', {{ gdpr_lakehouse._cipher_binding(owner_expr, column) }})
{%- endmacro %}
