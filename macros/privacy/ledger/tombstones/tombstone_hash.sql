{#- A subject id hashed under the tombstone key, as tombstones hold it (keyed_hash). The
    key is a scalar subquery (tombstone_key), which Spark allows in a projection, a
    filter or an aggregate, not in a join condition, an UPDATE or a DELETE: there, hash
    in a projection of the side whose ids are hashed and join on that column (which
    also keeps the join an equi-join). -#}
{% macro tombstone_hash(id_expr, keys=none) -%}
    {{ return(adapter.dispatch('tombstone_hash', 'gdpr_lakehouse')(id_expr, keys)) }}
{%- endmacro %}

{% macro spark__tombstone_hash(id_expr, keys=none) -%}
    {{ gdpr_lakehouse.keyed_hash(gdpr_lakehouse.tombstone_key(keys), "encode(" ~ id_expr ~ ", 'utf-8')", gdpr_lakehouse.key_binding(system_key='tombstone')) }}
{%- endmacro %}
