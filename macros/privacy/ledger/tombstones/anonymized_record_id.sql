{#- The id a record kept anonymized (on_erasure: anonymize, e.g. an order the law keeps)
    is stored under once its subject is erased: 'anon-' and the tombstone key's hash of
    its source id. The source system links its own id to the person; this id finds
    nothing there, while every later event for the record, a rebuild and a re-erasure
    compute the same one. An id already anonymized ('anon-' and 64 hex digits) stays as
    it is; a source id that merely starts with 'anon-' is hashed like any other. salt_expr: the
    tombstone key as a column, where a scalar subquery cannot go (a MERGE's SET). -#}
{% macro anonymized_record_id(id_expr, keys=none, salt_expr=none) -%}
    {{ return(adapter.dispatch('anonymized_record_id', 'gdpr_lakehouse')(id_expr, keys, salt_expr)) }}
{%- endmacro %}

{% macro spark__anonymized_record_id(id_expr, keys=none, salt_expr=none) -%}
    case when cast({{ id_expr }} as string) rlike '^anon-[0-9a-f]{64}$' then cast({{ id_expr }} as string)
        else concat('anon-', sha2(concat({{ salt_expr or gdpr_lakehouse.tombstone_key(keys) }}, encode(cast({{ id_expr }} as string), 'utf-8')), 256)) end
{%- endmacro %}
