{#- NULL when the key is gone (shredded) or wrong. key_expr is the key as the vault
    stores it. required=false (the masked views, which consumers query): NULL also where
    the reading process has no key-encryption key; the pipeline's statements keep
    required=true, so a missing KEK stops them. -#}
{% macro decrypt_pii(cipher_expr, key_expr, required=true) -%}
    {{ return(adapter.dispatch('decrypt_pii', 'gdpr_lakehouse')(cipher_expr, key_expr, required)) }}
{%- endmacro %}

{% macro spark__decrypt_pii(cipher_expr, key_expr, required=true) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        cast({{ 'gdpr_decrypt' if required else 'gdpr_try_decrypt' }}({{ cipher_expr }}, {{ key_expr }}, {{ gdpr_lakehouse._kek(required=required) }}) as string)
    {%- else -%}
        cast(try_aes_decrypt({{ cipher_expr }}, {{ key_expr }}, 'GCM') as string)
    {%- endif -%}
{%- endmacro %}

{% macro databricks__decrypt_pii(cipher_expr, key_expr, required=true) -%}
    cast(try_aes_decrypt({{ cipher_expr }}, {{ gdpr_lakehouse._open_key(key_expr, required) }}, 'GCM') as string)
{%- endmacro %}
