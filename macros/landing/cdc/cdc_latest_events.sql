{#- Per key, the newest valid event (macro cdc_events says which), with
    event_record_ref: `record_ref`, SQL over the event (read as `valid`) for the key
    as bronze stores it, hashed under the tombstone key (the models pass
    anonymized_record_id('valid.<key>')). It is what bronze stores a record under and
    what a delete marker (bronze.cdc_deletes) is matched on, and event_seq:
    `record_seq`, SQL over the event with its reference (read as `referenced`) for its
    place in the record's order as bronze stores it (the models pass
    source_seq('referenced._source_ts', 'referenced.event_record_ref'): the source time
    keyed by the record). The source's own id (an
    encounter, click or order id, a patient id) is linked to the person in the source
    system: bronze never stores it, so no version of a table can be looked up in the
    source to find whose row it was. -#}
{% macro cdc_latest_events(relation, key, record_ref, record_seq) -%}
    {{ return(adapter.dispatch('cdc_latest_events', 'gdpr_lakehouse')(relation, key, record_ref, record_seq)) }}
{%- endmacro %}

{% macro spark__cdc_latest_events(relation, key, record_ref, record_seq) -%}
    {%- set markers = ref('bronze_cdc_deletes') -%}
    select ranked.* from (
        {#- hashed in projections, once per key and over its newest event only: the
            tombstone key is a scalar subquery (macro tombstone_hash), which no filter
            passes below -#}
        select
            referenced.*,
            {{ record_seq }} as event_seq
        from (
            select
                valid.*,
                {{ record_ref }} as event_record_ref
            from (
                select numbered.* from (
                    select
                        *,
                        row_number() over (
                            partition by {{ key }}
                            order by _source_ts desc, event_op_rank desc, event_file desc, event_row desc
                        ) as event_rank
                    from ({{ gdpr_lakehouse.cdc_valid_events(relation, key, batch_only=is_incremental()) }}) as events
                ) as numbered
                where numbered.event_rank = 1
                {% if not is_incremental() -%}
                    and numbered.event_op != 'delete'
                {%- endif %}
            ) as valid
        ) as referenced
    ) as ranked
    {% if is_incremental() -%}
    left anti join {{ markers }} as marker
        on marker.entity = '{{ relation.identifier }}'
        and marker.record_key = ranked.event_record_ref
        and named_struct('t', marker.source_seq, 'r', marker.source_op_rank, 'f', marker.source_file, 'n', marker.source_row)
            > named_struct('t', ranked.event_seq, 'r', ranked.event_op_rank, 'f', ranked.event_file, 'n', ranked.event_row)
    {% endif -%}
{%- endmacro %}
