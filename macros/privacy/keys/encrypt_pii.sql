{#- AES-256-GCM with the subject's key; NULL stays NULL. -#}
{% macro encrypt_pii(value_expr, key_expr) -%}
    {{ return(adapter.dispatch('encrypt_pii', 'gdpr_lakehouse')(value_expr, key_expr)) }}
{%- endmacro %}

{% macro spark__encrypt_pii(value_expr, key_expr) -%}
    aes_encrypt(encode(cast({{ value_expr }} as string), 'utf-8'), {{ key_expr }}, 'GCM')
{%- endmacro %}
