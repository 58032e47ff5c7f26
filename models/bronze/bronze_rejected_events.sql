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
    applied now. No personal data: where the event is (file, row), its record
    key and subject id, its source time and the reason (the rule it breaks). Events of erased subjects are
    not listed (orders: listed without the user and under their anonymous id, as
    bronze keeps them anonymized).
    Stale events (older than the key's state) are applied by being ignored: not here.
-#}
{%- set entities = gdpr_lakehouse.cdc_landing_entities() -%}

with vault as (
    select subject_id from {{ ref('privacy_subject_keys') }}
),

{% for entity in entities %}
{{ entity.name }}_rejected as (
    select
        '{{ entity.name }}' as entity,
        events.event_file as source_file,
        events.event_row as source_row,
        {% if entity.anonymize -%}
        {{ gdpr_lakehouse.kept_record_key('events.' ~ entity.key, 'events.' ~ entity.subject) }} as record_key,
        {%- else -%}
        cast(events.{{ entity.key }} as string) as record_key,
        {%- endif %}
        {% if entity.anonymize -%}
        events.living_subject_id as subject_id,
        {%- else -%}
        events.{{ entity.subject }} as subject_id,
        {%- endif %}
        events._source_ts as source_updated_at,
        coalesce(
            {{ gdpr_lakehouse.cdc_event_issue('events.' ~ entity.key) }},
            case when not {{ gdpr_lakehouse.cdc_event_has_key('events', 'living_subject_id') }} then 'no key in the vault for the subject' end
        ) as reason
    from (
        select
            *,
            {{ gdpr_lakehouse.unless_tombstoned('events.' ~ entity.subject) }} as living_subject_id
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
        entity,
        source_file,
        source_row,
        record_key,
        subject_id,
        source_updated_at,
        reason,
        current_timestamp() as detected_at
    from rejected
)

select * from final
