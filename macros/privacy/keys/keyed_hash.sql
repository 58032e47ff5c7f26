{#- SHA-256 over a stored key and some bytes, in hex: sha2(concat(key, bytes), 256) with
    the key opened inside the engine (gdpr_keyed_hash with the envelope on, on Spark), so
    the statement never holds the key. key_binding: what the stored key is bound to
    (macro key_binding). Tombstone hashes, anonymous record ids and source_seq are keyed
    hashes under the tombstone key (key_binding(system_key='tombstone')). -#}
{% macro keyed_hash(key_expr, bytes_expr, key_binding) -%}
    {{ return(adapter.dispatch('keyed_hash', 'gdpr_lakehouse')(key_expr, bytes_expr, key_binding)) }}
{%- endmacro %}

{% macro spark__keyed_hash(key_expr, bytes_expr, key_binding) -%}
    {%- if gdpr_lakehouse.key_envelope() -%}
        gdpr_keyed_hash({{ key_expr }}, {{ key_binding }}, {{ bytes_expr }}, {{ gdpr_lakehouse._kek() }})
    {%- else -%}
        sha2(concat({{ key_expr }}, {{ bytes_expr }}), 256)
    {%- endif -%}
{%- endmacro %}

{% macro databricks__keyed_hash(key_expr, bytes_expr, key_binding) -%}
    sha2(concat({{ gdpr_lakehouse._open_key(key_expr, key_binding) }}, {{ bytes_expr }}), 256)
{%- endmacro %}
