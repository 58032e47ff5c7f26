{#- The event columns every CDC bronze model keeps: what was applied, and its place in
    the order above (cdc_sequence_by compares the last four). Not the source time: its
    keyed form, source_seq (an exact event time singles a person out). -#}
{% macro cdc_event_columns(alias) -%}
    {{ return(adapter.dispatch('cdc_event_columns', 'gdpr_lakehouse')(alias)) }}
{%- endmacro %}

{% macro spark__cdc_event_columns(alias) -%}
    {{ alias }}.event_op as source_op,
    {{ alias }}.event_seq as source_seq,
    {{ alias }}.event_op_rank as source_op_rank,
    {{ alias }}.event_file as source_file,
    {{ alias }}.event_row as source_row,
    current_timestamp() as ingested_at
{%- endmacro %}
