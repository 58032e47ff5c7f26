{#- Envelope: data keys stored wrapped by a key-encryption key (hex, 64 characters)
    that Spark reads from the environment variable named by var kek_env_var (default
    LAKEHOUSE_KEK). Whether the envelope is on is a property of the lakehouse, not of a
    command: macro key_envelope(). -#}
{% macro wrap_key(key_expr) -%}
    {{ return(adapter.dispatch('wrap_key', 'gdpr_lakehouse')(key_expr)) }}
{%- endmacro %}

{% macro spark__wrap_key(key_expr) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        aes_encrypt({{ key_expr }}, {{ gdpr_lakehouse._kek() }}, 'GCM')
    {%- else -%}
        {{ key_expr }}
    {%- endif -%}
{%- endmacro %}
