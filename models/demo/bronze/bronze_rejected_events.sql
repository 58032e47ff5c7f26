{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key=['entity', 'source_file', 'source_row'],
        cdc_delete_condition='reason is null',
        cdc_sequence_by=[],
        on_schema_change='append_new_columns',
        meta={'report': 'rejected_events'},
    )
}}

{#-
    Every landing event bronze does not apply, with the rule it breaks: nothing is
    dropped silently. Each run evaluates the events of this build's landing files
    (the first run: all of them) before bronze applies them, and MERGEs: a rejected
    event is added, and an event listed before that can now be applied (a subject the
    vault has since keyed, its file read again) leaves. So it lists what is not
    applied now. No personal data and no source id: where the event is (file, row),
    its record key hashed under the tombstone key (macro anonymized_record_id, as
    bronze stores it), its subject's pseudonym (null while the vault has no key for
    them), its source time keyed by the record (macro source_seq) and the reason (the rule it breaks). Events of erased
    subjects are not listed (orders: listed without the user, as bronze keeps them
    anonymized).
    Stale events (older than the key's state) are applied by being ignored: not here.
-#}
{%- set entities = gdpr_lakehouse.cdc_landing_entities() -%}

{{- gdpr_lakehouse.refuse_clear_columns(['subject_id', 'source_updated_at'],
    'dbt run --full-refresh --select bronze_rejected_events (then python -m python_jobs.purge removes the source ids from its history)') }}

with vault as (
    select
        subject_id,
        subject_pseudonym
    from {{ ref('privacy_subject_keys') }}
),

{% for entity in entities %}
{{ entity.name }}_rejected as (
    select
        '{{ entity.name }}' as entity,
        events.event_file as source_file,
        events.event_row as source_row,
        events.record_ref as record_key,
        case when events.living_subject_id is not null then vault.subject_pseudonym end as subject_pseudonym,
        events._source_ts,
        coalesce(
            {{ gdpr_lakehouse.cdc_event_issue('events.' ~ entity.key) }},
            case when not {{ gdpr_lakehouse.cdc_event_has_key('events', 'living_subject_id') }} then 'no key in the vault for the subject' end
        ) as reason
    from (
        select
            *,
            {{ gdpr_lakehouse.unless_tombstoned('events.' ~ entity.subject) }} as living_subject_id,
            {#- hashed in a projection (macro tombstone_hash) -#}
            {{ gdpr_lakehouse.anonymized_record_id('events.' ~ entity.key) }} as record_ref
        from ({{ gdpr_lakehouse.cdc_events(source('landing', entity.name), entity.key, batch_only=is_incremental()) }}) as events
    ) as events
    left join vault on events.{{ entity.subject }} = vault.subject_id
    {% if not entity.anonymize -%}
    where {{ gdpr_lakehouse.not_tombstoned('events.' ~ entity.subject) }}
    {%- endif %}
),

{% endfor %}
evaluated as (
    {%- for entity in entities %}
    select * from {{ entity.name }}_rejected
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
),

rejected as (
    -- an applicable event is kept only to take an earlier rejection of it out
    select * from evaluated
    where reason is not null
    {% if is_incremental() %}
    union all
    select evaluated.*
    from evaluated
    left semi join {{ this }} as listed
        on
            evaluated.entity = listed.entity
            and evaluated.source_file = listed.source_file
            and evaluated.source_row = listed.source_row
    where evaluated.reason is null
    {% endif %}
),

final as (
    select
        rejected.entity,
        rejected.source_file,
        rejected.source_row,
        rejected.record_key,
        rejected.subject_pseudonym,
        {#- keyed here, over the listed events only (macro source_seq: a projection
            no filter passes below) -#}
        {{ gdpr_lakehouse.source_seq('rejected._source_ts', 'rejected.record_key') }} as source_seq,
        rejected.reason,
        current_timestamp() as detected_at
    from rejected
)

select * from final
