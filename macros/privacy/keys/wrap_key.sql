{#- Envelope: data keys stored wrapped by a key-encryption key (hex, 64 characters)
    that the project's Spark extension reads from the environment variable named by var
    kek_env_var (default LAKEHOUSE_KEK): AES-256-GCM, the format of aes_encrypt, bound to
    key_binding (macro key_binding: the subject's pseudonym, or a system key's name), so a
    wrapped key moved to another row does not open there. Whether the envelope is on is a
    property of the lakehouse, not of a command: macro key_envelope(). -#}
{% macro wrap_key(key_expr, key_binding) -%}
    {{ return(adapter.dispatch('wrap_key', 'gdpr_lakehouse')(key_expr, key_binding)) }}
{%- endmacro %}

{% macro spark__wrap_key(key_expr, key_binding) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        gdpr_wrap_key({{ key_expr }}, {{ key_binding }}, {{ gdpr_lakehouse._kek() }})
    {%- else -%}
        {{ key_expr }}
    {%- endif -%}
{%- endmacro %}

{#- Databricks: the key from the secret scope, inside the warehouse (secret()). -#}
{% macro databricks__wrap_key(key_expr, key_binding) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        aes_encrypt({{ key_expr }}, {{ gdpr_lakehouse._kek() }}, 'GCM', 'DEFAULT', x'', {{ key_binding }})
    {%- else -%}
        {{ key_expr }}
    {%- endif -%}
{%- endmacro %}
