{#- The landing tables bronze applies as CDC: record key, subject column, whether bronze
    needs the subject's vault key for the event (it encrypts identifiers with it), and
    whether an erased subject's records are kept anonymized (on_erasure: anonymize).
    Read by bronze.rejected_events and the compliance test that recomputes bronze. -#}
{% macro cdc_landing_entities() -%}
    {{ return(adapter.dispatch('cdc_landing_entities', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__cdc_landing_entities() -%}
    {{ return([
        {'name': 'patients', 'key': 'patient_id', 'subject': 'patient_id', 'keyed': true, 'anonymize': false},
        {'name': 'encounters', 'key': 'encounter_id', 'subject': 'patient_id', 'keyed': false, 'anonymize': false},
        {'name': 'users', 'key': 'user_id', 'subject': 'user_id', 'keyed': true, 'anonymize': false},
        {'name': 'clicks', 'key': 'click_id', 'subject': 'user_id', 'keyed': false, 'anonymize': false},
        {'name': 'orders', 'key': 'order_id', 'subject': 'user_id', 'keyed': false, 'anonymize': true},
    ]) }}
{%- endmacro %}
