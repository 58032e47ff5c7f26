{#- AES-256-GCM with the subject's key as the vault stores it; NULL stays NULL. With the
    key envelope on (Spark), gdpr_encrypt opens the wrapped key inside the JVM: no
    statement ever holds the subject's key. -#}
{% macro encrypt_pii(value_expr, key_expr) -%}
    {{ return(adapter.dispatch('encrypt_pii', 'gdpr_lakehouse')(value_expr, key_expr)) }}
{%- endmacro %}

{% macro spark__encrypt_pii(value_expr, key_expr) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        gdpr_encrypt(encode(cast({{ value_expr }} as string), 'utf-8'), {{ key_expr }}, {{ gdpr_lakehouse._kek() }})
    {%- else -%}
        aes_encrypt(encode(cast({{ value_expr }} as string), 'utf-8'), {{ key_expr }}, 'GCM')
    {%- endif -%}
{%- endmacro %}

{% macro databricks__encrypt_pii(value_expr, key_expr) -%}
    aes_encrypt(encode(cast({{ value_expr }} as string), 'utf-8'), {{ gdpr_lakehouse._open_key(key_expr) }}, 'GCM')
{%- endmacro %}
