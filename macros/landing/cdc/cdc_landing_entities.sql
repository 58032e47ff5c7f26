{#- The landing tables bronze applies as CDC: record key, subject column, whether bronze
    needs the subject's vault key for the event (it encrypts identifiers with it), and
    whether an erased subject's records are kept anonymized (on_erasure: anonymize),
    and the column bronze stores the record key in (`stored_key`: for a subject's own
    record, `keyed`, the pseudonym the vault gives the key; for any other, the key
    hashed under the tombstone key, macro anonymized_record_id: bronze never stores
    the source's id).
    Read by bronze.rejected_events and the compliance test that recomputes bronze. -#}
{% macro cdc_landing_entities() -%}
    {{ return(adapter.dispatch('cdc_landing_entities', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__cdc_landing_entities() -%}
    {{ return([
        {'name': 'patients', 'key': 'patient_id', 'subject': 'patient_id', 'keyed': true, 'anonymize': false, 'stored_key': 'patient_pseudonym'},
        {'name': 'encounters', 'key': 'encounter_id', 'subject': 'patient_id', 'keyed': false, 'anonymize': false, 'stored_key': 'encounter_ref'},
        {'name': 'users', 'key': 'user_id', 'subject': 'user_id', 'keyed': true, 'anonymize': false, 'stored_key': 'user_pseudonym'},
        {'name': 'clicks', 'key': 'click_id', 'subject': 'user_id', 'keyed': false, 'anonymize': false, 'stored_key': 'click_ref'},
        {'name': 'orders', 'key': 'order_id', 'subject': 'user_id', 'keyed': false, 'anonymize': true, 'stored_key': 'order_ref'},
    ]) }}
{%- endmacro %}
