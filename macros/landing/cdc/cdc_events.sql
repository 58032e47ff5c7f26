{#
    CDC events of a landing table, in the order bronze applies them.

    cdc_events(relation, key, batch_only): every event (batch_only: only those of this
    build's landing files, macros/landing/batch/), with
        event_op        insert | update | delete (case-insensitive; Debezium's c and r
                        read as insert, u as update, d as delete), null when unknown
        event_file      the landing file's path under the table's folder (its name for
                        a file directly there), event_row its row index in the file

    cdc_valid_events(relation, key, batch_only): the events that can be applied (no
    rule of cdc_event_issue broken), with event_op_rank 0 insert, 1 update, 2 delete.

    cdc_latest_events(relation, key): per key, the newest valid event. An event is
    newer than another when its _source_ts is later; at one _source_ts a delete beats
    an update beats an insert; then the later file path wins, then the later row of
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
    {{ return(adapter.dispatch('cdc_events', 'gdpr_lakehouse')(relation, key, batch_only)) }}
{%- endmacro %}

{% macro spark__cdc_events(relation, key, batch_only=false) -%}
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
        {{ gdpr_lakehouse._landing_file_name(relation.identifier, 'events._metadata.file_path') }} as event_file,
        events._metadata.row_index as event_row
    from {{ gdpr_lakehouse.landing_rows(relation, batch_only) }} as events
{%- endmacro %}

{#- A landing file's name as bronze records it (source_file, the order's tie-break):
    its path under the landing table's folder, e.g. 2026/12/04/part-0.parquet for a
    date-partitioned sink's file (two days' part-0.parquet never meet), its bare name for
    a file directly in the folder. `path` is a SQL expression of the file's full path. -#}
{% macro _landing_file_name(entity, path) -%}
    {%- set location = gdpr_lakehouse.landing_locations([entity]).get(entity) -%}
    {%- if location -%}
        {{ return('substring(' ~ path ~ ', ' ~ (location | length + 2) ~ ')') }}
    {%- endif -%}
    {{ return('element_at(split(' ~ path ~ ", '/'), -1)") }}
{%- endmacro %}
