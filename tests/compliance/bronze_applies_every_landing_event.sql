{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(tags=['compliance'], meta={'fix': 'dbt run --select bronze'}) }}
{#- No landing event is lost: per key, bronze holds the newest valid event of the
    landing zone (source time, keyed as bronze stores it: macro source_seq; then delete > update > insert; a key whose newest event
    is a delete is absent), recomputed here from the landing files. Keys of erased
    subjects are skipped (orders are kept, anonymized); an event waiting for its
    subject's vault key (macro cdc_event_has_key) is not in bronze and must be listed
    in bronze.rejected_events. A subject's own record is stored under the pseudonym the vault
    gives its key, any other under its key hashed under the tombstone key
    (cdc_landing_entities stored_key). Fails after files land and
    before the next build (meta.fix). -#}
{%- set entities = gdpr_lakehouse.cdc_landing_entities() -%}

with vault as (
    select
        subject_id,
        subject_pseudonym
    from {{ ref('privacy_subject_keys') }}
),

{% for entity in entities %}
{{ entity.name }}_latest as (
    {{ gdpr_lakehouse.cdc_latest_events(source('landing', entity.name), entity.key,
        gdpr_lakehouse.anonymized_record_id('valid.' ~ entity.key),
        gdpr_lakehouse.source_seq('referenced._source_ts', 'referenced.event_record_ref')) }}
),

{{ entity.name }}_newest as (
    select
        latest.*,
        {{ gdpr_lakehouse.unless_tombstoned('latest.' ~ entity.subject) }} as living_subject_id
    from {{ entity.name }}_latest as latest
),

{{ entity.name }}_expected as (
    select
        {% if entity.keyed -%}
        vault.subject_pseudonym as record_key,
        {%- else -%}
        newest.event_record_ref as record_key,
        {%- endif %}
        newest.event_seq as source_seq,
        newest.event_op_rank as source_op_rank
    from {{ entity.name }}_newest as newest
    left join vault on newest.{{ entity.subject }} = vault.subject_id
    where
        {{ gdpr_lakehouse.cdc_event_has_key('newest', 'living_subject_id') }}
        {%- if entity.keyed %}
        and vault.subject_id is not null
        {%- endif %}
        {%- if not entity.anonymize %}
        and {{ gdpr_lakehouse.not_tombstoned('newest.' ~ entity.subject) }}
        {%- endif %}
),

{{ entity.name }}_unlisted as (
    select
        '{{ entity.name }}' as entity,
        newest.event_record_ref as record_key,
        newest.event_seq as expected_source_seq,
        cast(null as bigint) as bronze_source_seq
    from {{ entity.name }}_newest as newest
    left join vault on newest.{{ entity.subject }} = vault.subject_id
    left join {{ ref('bronze_rejected_events') }} as listed
        on
            listed.entity = '{{ entity.name }}'
            and newest.event_file = listed.source_file
            and newest.event_row = listed.source_row
    where
        not {{ gdpr_lakehouse.cdc_event_has_key('newest', 'living_subject_id') }}
        and listed.source_file is null
),

{{ entity.name }}_differences as (
    select
        '{{ entity.name }}' as entity,
        coalesce(expected.record_key, applied.{{ entity.stored_key }}) as record_key,
        expected.source_seq as expected_source_seq,
        applied.source_seq as bronze_source_seq
    from {{ entity.name }}_expected as expected
    full outer join {{ ref('bronze_' ~ entity.name) }} as applied
        on expected.record_key = applied.{{ entity.stored_key }}
    where
        expected.record_key is null
        or applied.{{ entity.stored_key }} is null
        or expected.source_seq != applied.source_seq
        or expected.source_op_rank != applied.source_op_rank
    union all
    select * from {{ entity.name }}_unlisted
),

{% endfor %}
differences as (
    {%- for entity in entities %}
    select * from {{ entity.name }}_differences
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
)

select * from differences
