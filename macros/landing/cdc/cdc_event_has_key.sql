{#- SQL true when an event of cdc_events() can be applied as far as keys go: its subject
    has a key in the vault (`vault`, joined on the subject), or it needs none (a delete,
    or an event that names no subject). An event of a living subject with no key waits,
    listed in bronze.rejected_events, and its file is read again at every build: stored
    without a key it would lose what the key encrypts, and a record kept anonymized
    would read as an erased subject's. -#}
{% macro cdc_event_has_key(events, subject, vault='vault') -%}
    {{ return(adapter.dispatch('cdc_event_has_key', 'gdpr_lakehouse')(events, subject, vault)) }}
{%- endmacro %}

{% macro spark__cdc_event_has_key(events, subject, vault='vault') -%}
    ({{ vault }}.subject_id is not null or {{ events }}.{{ subject }} is null or {{ events }}.event_op = 'delete')
{%- endmacro %}
