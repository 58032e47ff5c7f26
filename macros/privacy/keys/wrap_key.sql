{#- Envelope: data keys stored wrapped by a key-encryption key (hex, 64 characters)
    that the project's Spark extension reads from the environment variable named by var
    kek_env_var (default LAKEHOUSE_KEK): AES-256-GCM, the format of aes_encrypt. Whether the envelope is on is a property of the lakehouse, not of a
    command: macro key_envelope(). -#}
{% macro wrap_key(key_expr) -%}
    {{ return(adapter.dispatch('wrap_key', 'gdpr_lakehouse')(key_expr)) }}
{%- endmacro %}

{% macro spark__wrap_key(key_expr) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        gdpr_wrap_key({{ key_expr }}, {{ gdpr_lakehouse._kek() }})
    {%- else -%}
        {{ key_expr }}
    {%- endif -%}
{%- endmacro %}

{#- Databricks: the key from the secret scope, inside the warehouse (secret()). -#}
{% macro databricks__wrap_key(key_expr) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        aes_encrypt({{ key_expr }}, {{ gdpr_lakehouse._kek() }}, 'GCM')
    {%- else -%}
        {{ key_expr }}
    {%- endif -%}
{%- endmacro %}
