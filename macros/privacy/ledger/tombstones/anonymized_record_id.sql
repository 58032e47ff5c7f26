{#- A source record id hashed under the tombstone key: 'anon-' and 64 hex digits. The
    source system links its own id (an encounter, click or order id) to the person;
    bronze stores every record under this id instead (cdc_latest_events'
    event_record_ref), so no version of any table can be looked up in the source to
    find whose row it was, while every later event for the record, a rebuild and a
    re-erasure compute the same one. A record kept anonymized after its subject's
    erasure (on_erasure: anonymize, e.g. an order the law keeps) keeps it. An id
    already anonymized ('anon-' and 64 hex digits) stays as it is. salt_expr: the
    tombstone key (as stored) as a column, where a scalar subquery cannot go (a MERGE's SET). -#}
{% macro anonymized_record_id(id_expr, keys=none, salt_expr=none) -%}
    {{ return(adapter.dispatch('anonymized_record_id', 'gdpr_lakehouse')(id_expr, keys, salt_expr)) }}
{%- endmacro %}

{% macro spark__anonymized_record_id(id_expr, keys=none, salt_expr=none) -%}
    case when cast({{ id_expr }} as string) rlike '^anon-[0-9a-f]{64}$' then cast({{ id_expr }} as string)
        else concat('anon-', {{ gdpr_lakehouse.keyed_hash(salt_expr or gdpr_lakehouse.tombstone_key(keys), "encode(cast(" ~ id_expr ~ " as string), 'utf-8')", gdpr_lakehouse.key_binding(system_key='tombstone')) }}) end
{%- endmacro %}
