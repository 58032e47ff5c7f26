{#- The source time a source_seq stands for (macro source_seq): its record's offset,
    derived from the tombstone key, taken away. For the jobs that need the time itself
    (a rectification event newer than the row). -#}
{% macro source_seq_time(seq_expr, record_ref_expr, keys=none) -%}
    {{ return(adapter.dispatch('source_seq_time', 'gdpr_lakehouse')(seq_expr, record_ref_expr, keys)) }}
{%- endmacro %}

{% macro spark__source_seq_time(seq_expr, record_ref_expr, keys=none) -%}
    timestamp_micros({{ seq_expr }} - {{ gdpr_lakehouse._source_seq_offset(record_ref_expr, keys) }})
{%- endmacro %}
