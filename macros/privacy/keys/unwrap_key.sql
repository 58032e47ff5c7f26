{#- required=false for a view that consumers query: where their process has no KEK the
    keys read as NULL (identifiers masked or NULL) instead of failing the query. The
    pipeline's own statements keep required=true: a missing KEK stops them, it never
    encrypts with a NULL key. -#}
{% macro unwrap_key(stored_expr, required=true) -%}
    {{ return(adapter.dispatch('unwrap_key', 'gdpr_lakehouse')(stored_expr, required)) }}
{%- endmacro %}

{% macro spark__unwrap_key(stored_expr, required=true) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        {%- if required -%}
            gdpr_unwrap_key({{ stored_expr }}, {{ gdpr_lakehouse._kek() }})
        {%- else -%}
            gdpr_try_unwrap_key({{ stored_expr }}, {{ gdpr_lakehouse._kek(required=false) }})
        {%- endif -%}
    {%- else -%}
        {{ stored_expr }}
    {%- endif -%}
{%- endmacro %}

{#- Databricks: the key from the secret scope (secret(), or try_secret() for a consumer
    without READ on it), inside the warehouse. -#}
{% macro databricks__unwrap_key(stored_expr, required=true) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        {%- if required -%}
            aes_decrypt({{ stored_expr }}, {{ gdpr_lakehouse._kek() }}, 'GCM')
        {%- else -%}
            try_aes_decrypt({{ stored_expr }}, {{ gdpr_lakehouse._kek(required=false) }}, 'GCM')
        {%- endif -%}
    {%- else -%}
        {{ stored_expr }}
    {%- endif -%}
{%- endmacro %}
