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
        {{ return({
            'upstream': ref('silver_encounters'), 'subject': 'patient_pseudonym', 'subject_kind': 'pseudonym',
            'cells': [
                ['admitted_month', "date_trunc('month', rows.admitted_at)"],
                ['icd10_chapter', "coalesce(chapters.chapter, 'unknown')"],
                ['department_id', 'rows.department_id'],
            ],
            'measures': [['encounter_count', 'count(*)', 'bigint'], ['total_cost', 'sum(rows.cost_amount)', 'decimal(22, 2)']],
            'joins': 'left join ' ~ ref('icd10_chapters') ~ ' as chapters'
                ~ ' on rows.diagnosis_category between chapters.first_category and chapters.last_category',
        }) }}
    {%- elif name == 'gold_clicks_hourly' -%}
        {{ return({
            'upstream': ref('silver_clicks'), 'subject': 'user_pseudonym', 'subject_kind': 'pseudonym',
            'cells': [['clicked_hour', "date_trunc('hour', rows.clicked_at)"], ['device', "coalesce(rows.device, 'unknown')"]],
            'measures': [['click_count', 'count(*)', 'bigint']],
            'joins': '',
        }) }}
    {%- elif name == 'gold_patients_by_city' -%}
        {{ return({
            'upstream': ref('bronze_patients'), 'subject': 'patient_id', 'subject_kind': 'id',
            'cells': [['city', "coalesce(rows.city, 'unknown')"]],
            'measures': [['patient_count', 'count(*)', 'bigint']],
            'joins': '',
        }) }}
    {%- endif -%}
    {%- do exceptions.raise_compiler_error("demo_retained_aggregate: no retained aggregate " ~ (name | string)[:80]
        ~ "; the demo has " ~ gdpr_lakehouse.demo_retained_aggregates() | join(', ')) -%}
{%- endmacro %}
