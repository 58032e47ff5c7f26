{#- NULL when the key is gone (shredded) or wrong, or when the ciphertext was not written
    for this owner and column (macro encrypt_pii: a value moved to another row or
    column). key_expr is the key as the vault stores it. required=false (the masked
    views, which consumers query): NULL also where the reading process has no
    key-encryption key; the pipeline's statements keep required=true, so a missing KEK
    stops them. unbound=true reads a ciphertext written before bindings existed (macro
    bind_ciphertexts, which binds them). -#}
{% macro decrypt_pii(cipher_expr, key_expr, owner_expr, column, required=true, key_binding=none, unbound=false) -%}
    {{ return(adapter.dispatch('decrypt_pii', 'gdpr_lakehouse')(cipher_expr, key_expr, owner_expr, column, required, key_binding, unbound)) }}
{%- endmacro %}

{% macro spark__decrypt_pii(cipher_expr, key_expr, owner_expr, column, required=true, key_binding=none, unbound=false) -%}
    {%- set aad = "x''" if unbound else gdpr_lakehouse._cipher_binding(owner_expr, column) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        cast({{ 'gdpr_decrypt' if required else 'gdpr_try_decrypt' }}({{ cipher_expr }}, {{ key_expr }}, {{ key_binding or gdpr_lakehouse.key_binding(owner_expr) }}, {{ aad }}, {{ gdpr_lakehouse._kek(required=required) }}) as string)
    {%- else -%}
        cast(try_aes_decrypt({{ cipher_expr }}, {{ key_expr }}, 'GCM', 'DEFAULT', {{ aad }}) as string)
    {%- endif -%}
{%- endmacro %}

{% macro databricks__decrypt_pii(cipher_expr, key_expr, owner_expr, column, required=true, key_binding=none, unbound=false) -%}
    cast(try_aes_decrypt({{ cipher_expr }}, {{ gdpr_lakehouse._open_key(key_expr, key_binding or gdpr_lakehouse.key_binding(owner_expr), required) }}, 'GCM', 'DEFAULT', {{ "x''" if unbound else gdpr_lakehouse._cipher_binding(owner_expr, column) }}) as string)
{%- endmacro %}
