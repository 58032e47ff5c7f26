{% macro tombstone_hash(id_expr, keys=none) -%}
    {{ return(adapter.dispatch('tombstone_hash', 'gdpr_lakehouse')(id_expr, keys)) }}
{%- endmacro %}

{% macro spark__tombstone_hash(id_expr, keys=none) -%}
    sha2(concat({{ gdpr_lakehouse.tombstone_key(keys) }}, encode({{ id_expr }}, 'utf-8')), 256)
{%- endmacro %}
