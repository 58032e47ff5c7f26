{#
    CDC events of a landing table, in the order bronze applies them.

    cdc_events(relation, key, batch_only): every event (batch_only: only those of this
    build's landing files, macros/landing/landing_batch.sql), with
        event_op        insert | update | delete (case-insensitive; Debezium's c and r
                        read as insert, u as update, d as delete), null when unknown
        event_file      the landing file's name, event_row its row index in the file

    cdc_valid_events(relation, key, batch_only): the events that can be applied (no
    rule of cdc_event_issue broken), with event_op_rank 0 insert, 1 update, 2 delete.

    cdc_latest_events(relation, key): per key, the newest valid event. An event is
    newer than another when its _source_ts is later; at one _source_ts a delete beats
    an update beats an insert; then the later file name wins, then the later row of
    the file. That order is total and depends on the landing files only, never on the
    order they arrived in, so late events, the same second split over two files, a
    backfill, batches landed out of order and a replayed file all give the same state.
    The first run reads every landing file and drops keys whose newest event is a
    delete. An incremental run reads only this build's new files, MERGEs only events
    newer than the row's state (config cdc_sequence_by) and ignores an event older than
    the key's delete marker (bronze.cdc_deletes): an older insert landing after a
    delete never brings the row back.
#}
{% macro cdc_events(relation, key, batch_only=false) -%}
    {#- every reader of landing events depends on the batch and its ledger -#}
    {%- do ref('bronze_landing_batch') -%}
    {%- do ref('bronze_landing_ledger') -%}
    select
        events.*,
        case lower(trim(events._op))
            when 'insert' then 'insert' when 'c' then 'insert' when 'r' then 'insert'
            when 'update' then 'update' when 'u' then 'update'
            when 'delete' then 'delete' when 'd' then 'delete'
        end as event_op,
        events._metadata.file_name as event_file,
        events._metadata.row_index as event_row
    from {{ relation }} as events
    {%- if batch_only %}
    where {{ gdpr_lakehouse.landing_batch_predicate(relation.identifier, 'events') }}
    {%- endif %}
{%- endmacro %}

{#- The rule an event of cdc_events() breaks, or null. -#}
{% macro cdc_event_issue(key) -%}
    case
        when {{ key }} is null then 'missing key'
        when _source_ts is null then 'missing source time'
        when event_op is null then 'unknown _op (allowed: insert, update, delete; Debezium c, r, u, d)'
    end
{%- endmacro %}

{% macro cdc_valid_events(relation, key, batch_only=false) -%}
    select
        *,
        case event_op when 'delete' then 2 when 'update' then 1 else 0 end as event_op_rank
    from ({{ gdpr_lakehouse.cdc_events(relation, key, batch_only) }}) as described
    where {{ gdpr_lakehouse.cdc_event_issue(key) }} is null
{%- endmacro %}

{% macro cdc_latest_events(relation, key) -%}
    {%- set markers = ref('bronze_cdc_deletes') -%}
    select ranked.* from (
        select
            *,
            row_number() over (
                partition by {{ key }}
                order by _source_ts desc, event_op_rank desc, event_file desc, event_row desc
            ) as event_rank
        from ({{ gdpr_lakehouse.cdc_valid_events(relation, key, batch_only=is_incremental()) }}) as valid
    ) as ranked
    {% if is_incremental() -%}
    left anti join {{ markers }} as marker
        on marker.entity = '{{ relation.identifier }}'
        and marker.record_key = cast(ranked.{{ key }} as string)
        and named_struct('t', marker.source_updated_at, 'r', marker.source_op_rank, 'f', marker.source_file, 'n', marker.source_row)
            > named_struct('t', ranked._source_ts, 'r', ranked.event_op_rank, 'f', ranked.event_file, 'n', ranked.event_row)
    {% endif -%}
    where ranked.event_rank = 1
    {% if not is_incremental() %}
        and ranked.event_op != 'delete'
    {% endif %}
{%- endmacro %}

{#- The event columns every CDC bronze model keeps: what was applied, and its place in
    the order above (cdc_sequence_by compares the last four). -#}
{% macro cdc_event_columns(alias) -%}
    {{ alias }}.event_op as source_op,
    {{ alias }}._source_ts as source_updated_at,
    {{ alias }}.event_op_rank as source_op_rank,
    {{ alias }}.event_file as source_file,
    {{ alias }}.event_row as source_row,
    current_timestamp() as ingested_at
{%- endmacro %}

{#- The landing tables bronze applies as CDC: record key, subject column, whether bronze
    needs the subject's vault key for the event (it encrypts identifiers with it), and
    whether an erased subject's records are kept anonymized (on_erasure: anonymize).
    Read by bronze.rejected_events and the compliance test that recomputes bronze. -#}
{% macro cdc_landing_entities() -%}
    {{ return([
        {'name': 'patients', 'key': 'patient_id', 'subject': 'patient_id', 'keyed': true, 'anonymize': false},
        {'name': 'encounters', 'key': 'encounter_id', 'subject': 'patient_id', 'keyed': false, 'anonymize': false},
        {'name': 'users', 'key': 'user_id', 'subject': 'user_id', 'keyed': true, 'anonymize': false},
        {'name': 'clicks', 'key': 'click_id', 'subject': 'user_id', 'keyed': false, 'anonymize': false},
        {'name': 'orders', 'key': 'order_id', 'subject': 'user_id', 'keyed': false, 'anonymize': true},
    ]) }}
{%- endmacro %}
