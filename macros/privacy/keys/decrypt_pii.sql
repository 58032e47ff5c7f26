{#- NULL when the key is gone (shredded) or wrong. -#}
{% macro decrypt_pii(cipher_expr, key_expr) -%}
    {{ return(adapter.dispatch('decrypt_pii', 'gdpr_lakehouse')(cipher_expr, key_expr)) }}
{%- endmacro %}

{% macro spark__decrypt_pii(cipher_expr, key_expr) -%}
    cast(try_aes_decrypt({{ cipher_expr }}, {{ key_expr }}, 'GCM') as string)
{%- endmacro %}
