{#- The event columns every CDC bronze model keeps: what was applied, and its place in
    the order above (cdc_sequence_by compares the last four). -#}
{% macro cdc_event_columns(alias) -%}
    {{ return(adapter.dispatch('cdc_event_columns', 'gdpr_lakehouse')(alias)) }}
{%- endmacro %}

{% macro spark__cdc_event_columns(alias) -%}
    {{ alias }}.event_op as source_op,
    {{ alias }}._source_ts as source_updated_at,
    {{ alias }}.event_op_rank as source_op_rank,
    {{ alias }}.event_file as source_file,
    {{ alias }}.event_row as source_row,
    current_timestamp() as ingested_at
{%- endmacro %}
