{#- The demo's retained anonymous aggregates, each declared once: what the model
    counts (macro k_anonymous_aggregate) and what its compliance test recounts
    (retained_aggregates_cover_their_upstream) are the same spec. demo_retained_aggregates()
    names them; demo_retained_aggregate(name) is the spec (upstream, subject,
    subject_kind, cells, measures, joins). Only the named spec's refs are resolved, so
    a model depends on its own upstream alone. -#}
{% macro demo_retained_aggregate(name) -%}
    {{ return(adapter.dispatch('demo_retained_aggregate', 'gdpr_lakehouse')(name)) }}
{%- endmacro %}

{% macro spark__demo_retained_aggregate(name) -%}
    {%- if name == 'gold_encounters_monthly' -%}
        {#- silver keeps the category, the department and the cost encrypted under the patient's key:
            decrypted in the query, after k_anonymous_aggregate leaves erased subjects
            out. A subject with no key left (erased under a tombstone that names no
            pseudonym) is counted on neither side, so what it contributed stays; a
            key that does not open its ciphertext stops the build. -#}
        {%- set category = gdpr_lakehouse.decrypt_pii_or_fail('rows.diagnosis_category_enc', 'vault.data_key', 'vault.subject_pseudonym', 'diagnosis_category_enc', 'gold_encounters_monthly.icd10_chapter') -%}
        {%- set cost = gdpr_lakehouse.decrypt_pii_or_fail('rows.cost_enc', 'vault.data_key', 'vault.subject_pseudonym', 'cost_enc', 'gold_encounters_monthly.total_cost') -%}
        {%- set department = gdpr_lakehouse.decrypt_pii_or_fail('rows.department_id_enc', 'vault.data_key', 'vault.subject_pseudonym', 'department_id_enc', 'gold_encounters_monthly.department_id') -%}
        {{ return({
            'upstream': ref('silver_encounters'), 'subject': 'patient_pseudonym', 'subject_kind': 'pseudonym',
            'cells': [
                ['admitted_month', 'cast(rows.admitted_month as timestamp)'],
                ['icd10_chapter', "coalesce(chapters.chapter, 'unknown')"],
                ['department_id', department],
            ],
            'measures': [['encounter_count', 'count(*)', 'bigint'],
                         ['total_cost', 'sum(cast(' ~ cost ~ ' as decimal(12, 2)))', 'decimal(22, 2)']],
            'joins': 'inner join ' ~ ref('privacy_data_keys') ~ ' as vault on rows.patient_pseudonym = vault.subject_pseudonym'
                ~ ' left join ' ~ ref('icd10_chapters') ~ ' as chapters'
                ~ ' on ' ~ category ~ ' between chapters.first_category and chapters.last_category',
        }) }}
    {%- elif name == 'gold_clicks_hourly' -%}
        {{ return({
            'upstream': ref('silver_clicks'), 'subject': 'user_pseudonym', 'subject_kind': 'pseudonym',
            'cells': [['clicked_hour', 'rows.clicked_hour'], ['device', "coalesce(rows.device, 'unknown')"]],
            'measures': [['click_count', 'count(*)', 'bigint']],
            'joins': '',
        }) }}
    {%- elif name == 'gold_patients_by_city' -%}
        {#- bronze keeps the city encrypted under the patient's key (with the age band
            it singles a patient out): decrypted in the query, as above. -#}
        {%- set city = gdpr_lakehouse.decrypt_pii_or_fail('rows.city_enc', 'vault.data_key', 'vault.subject_pseudonym', 'city_enc', 'gold_patients_by_city.city') -%}
        {{ return({
            'upstream': ref('bronze_patients'), 'subject': 'patient_pseudonym', 'subject_kind': 'pseudonym',
            'cells': [['city', "coalesce(" ~ city ~ ", 'unknown')"]],
            'measures': [['patient_count', 'count(*)', 'bigint']],
            'joins': 'inner join ' ~ ref('privacy_data_keys') ~ ' as vault on rows.patient_pseudonym = vault.subject_pseudonym',
        }) }}
    {%- endif -%}
    {%- do exceptions.raise_compiler_error("demo_retained_aggregate: no retained aggregate " ~ (name | string)[:80]
        ~ "; the demo has " ~ gdpr_lakehouse.demo_retained_aggregates() | join(', ')) -%}
{%- endmacro %}
