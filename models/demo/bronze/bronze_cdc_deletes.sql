{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key=['entity', 'record_key'],
        cdc_delete_condition='',
        cdc_sequence_by=[],
    )
}}

{#-
    Delete markers: per landing table and record key, the newest delete event ever
    applied, with its place in the apply order. Bronze reads only new landing files, so
    the delete of a key it no longer holds is remembered here: an insert or update older
    than the marker, landing later (a backfill, a replay, a late file), is stale and
    ignored (macro cdc_latest_events); a newer one applies. Kept until the subject is
    erased (the erasure plan deletes a subject's markers; an erased subject is never
    ingested again, by its tombstone). No source id: the record by its key hashed under
    the tombstone key, as bronze stores it (macro anonymized_record_id), the subject by
    the pseudonym the vault gives them, the delete's source time only keyed by the
    record (macro source_seq). Orders are kept anonymized: their markers lose
    the user.
-#}
{{- gdpr_lakehouse.refuse_clear_columns(['subject_id', 'source_updated_at'],
    'dbt run --full-refresh --select bronze_cdc_deletes (then python -m python_jobs.purge removes the source ids from its history)') }}
{%- set entities = gdpr_lakehouse.cdc_landing_entities() %}

with vault as (
    select
        subject_id,
        subject_pseudonym
    from {{ ref('privacy_subject_keys') }}
),

{% for entity in entities %}
{{ entity.name }}_deletes as (
    select
        '{{ entity.name }}' as entity,
        {#- hashed in a projection (macro tombstone_hash) -#}
        {{ gdpr_lakehouse.anonymized_record_id('events.' ~ entity.key) }} as record_key,
        vault.subject_pseudonym,
        events._source_ts,
        events.event_op_rank as source_op_rank,
        events.event_file as source_file,
        events.event_row as source_row
    from (
        select
            *,
            {#- an erased user's order: kept, without the user -#}
            {{ gdpr_lakehouse.unless_tombstoned('landed.' ~ entity.subject) if entity.anonymize else 'landed.' ~ entity.subject }} as marked_subject_id
        from ({{ gdpr_lakehouse.cdc_valid_events(source('landing', entity.name), entity.key, batch_only=is_incremental()) }}) as landed
    ) as events
    left join vault on events.marked_subject_id = vault.subject_id
    where
        events.event_op = 'delete'
        {% if not entity.anonymize -%}
        and {{ gdpr_lakehouse.not_tombstoned('events.' ~ entity.subject) }}
        {%- endif %}
),

{% endfor %}
new_deletes as (
    {#- the source time keyed by the record (macro source_seq), in a projection -#}
    select
        landed.entity,
        landed.record_key,
        landed.subject_pseudonym,
        {{ gdpr_lakehouse.source_seq('landed._source_ts', 'landed.record_key') }} as source_seq,
        landed.source_op_rank,
        landed.source_file,
        landed.source_row
    from (
        {%- for entity in entities %}
        select * from {{ entity.name }}_deletes
        {% if not loop.last %}union all{% endif %}
        {%- endfor %}
    ) as landed
),

candidates as (
    select * from new_deletes
    {% if is_incremental() %}
    union all
    select
        known.entity,
        known.record_key,
        known.subject_pseudonym,
        known.source_seq,
        known.source_op_rank,
        known.source_file,
        known.source_row
    from {{ this }} as known
    left semi join new_deletes
        on
            known.entity = new_deletes.entity
            and known.record_key = new_deletes.record_key
    {% endif %}
),

ranked as (
    select
        *,
        row_number() over (
            partition by entity, record_key
            order by source_seq desc, source_op_rank desc, source_file desc, source_row desc
        ) as marker_rank
    from candidates
),

final as (
    select
        entity,
        record_key,
        subject_pseudonym,
        source_seq,
        source_op_rank,
        source_file,
        source_row,
        current_timestamp() as recorded_at
    from ranked
    where marker_rank = 1
)

select * from final
