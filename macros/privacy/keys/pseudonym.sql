{#- A subject's pseudonym: SHA-256 over its 256-bit key and id. Without the key it
    cannot be recomputed from an id, so a shredded subject is unlinkable. key_expr is
    the new key in clear, as privacy_subject_keys draws it, before it is wrapped. -#}
{% macro pseudonym(key_expr, id_expr) -%}
    {{ return(adapter.dispatch('pseudonym', 'gdpr_lakehouse')(key_expr, id_expr)) }}
{%- endmacro %}

{% macro spark__pseudonym(key_expr, id_expr) -%}
    sha2(concat({{ key_expr }}, encode({{ id_expr }}, 'utf-8')), 256)
{%- endmacro %}
