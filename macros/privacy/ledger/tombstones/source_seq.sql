{#- Where an event stands in its record's apply order, as bronze stores it: the source
    time in microseconds plus an offset in [0, 2^52) that the tombstone key derives
    from the record's stored reference (cdc_latest_events' event_record_ref, the
    markers' record_key). The offset is the same for every event of one record, so
    two events of a record compare as their source times do (the MERGE's
    cdc_sequence_by, the delete markers); without the key the number says nothing about
    when the event happened. In the demo the source time of a change is the time of the
    click, order or admission itself, an exact time that singles a person out: bronze
    keeps this instead (source_seq_time turns it back, with the key). Spark allows the
    key's scalar subquery in a projection, a filter or an aggregate (macro tombstone_hash). -#}
{% macro source_seq(ts_expr, record_ref_expr, keys=none) -%}
    {{ return(adapter.dispatch('source_seq', 'gdpr_lakehouse')(ts_expr, record_ref_expr, keys)) }}
{%- endmacro %}

{% macro spark__source_seq(ts_expr, record_ref_expr, keys=none) -%}
    (unix_micros({{ ts_expr }}) + {{ gdpr_lakehouse._source_seq_offset(record_ref_expr, keys) }})
{%- endmacro %}

{% macro _source_seq_offset(record_ref_expr, keys=none) -%}
    cast(conv(substr({{ gdpr_lakehouse.keyed_hash(gdpr_lakehouse.tombstone_key(keys),
        "encode(concat('source_seq|', cast(" ~ record_ref_expr ~ " as string)), 'utf-8')", gdpr_lakehouse.key_binding(system_key='tombstone')) }}, 1, 13), 16, 10) as bigint)
{%- endmacro %}
