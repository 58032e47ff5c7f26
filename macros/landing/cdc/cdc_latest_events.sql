{#- Per key, the newest valid event (macro cdc_events says which), with
    event_record_key: the key bronze stores the record under, as a string. By default
    the key itself; `record_key` is SQL over the event (read as `valid`) for a model
    that keys some records otherwise (macro kept_record_key: a record kept anonymized).
    A delete marker (bronze.cdc_deletes) is matched on it. -#}
{% macro cdc_latest_events(relation, key, record_key=none) -%}
    {{ return(adapter.dispatch('cdc_latest_events', 'gdpr_lakehouse')(relation, key, record_key)) }}
{%- endmacro %}

{% macro spark__cdc_latest_events(relation, key, record_key=none) -%}
    {%- set markers = ref('bronze_cdc_deletes') -%}
    select ranked.* from (
        select
            *,
            row_number() over (
                partition by {{ key }}
                order by _source_ts desc, event_op_rank desc, event_file desc, event_row desc
            ) as event_rank
        from (
            select
                *,
                {{ record_key or ('cast(valid.' ~ key ~ ' as string)') }} as event_record_key
            from ({{ gdpr_lakehouse.cdc_valid_events(relation, key, batch_only=is_incremental()) }}) as valid
        ) as keyed
    ) as ranked
    {% if is_incremental() -%}
    left anti join {{ markers }} as marker
        on marker.entity = '{{ relation.identifier }}'
        and marker.record_key = ranked.event_record_key
        and named_struct('t', marker.source_updated_at, 'r', marker.source_op_rank, 'f', marker.source_file, 'n', marker.source_row)
            > named_struct('t', ranked._source_ts, 'r', ranked.event_op_rank, 'f', ranked.event_file, 'n', ranked.event_row)
    {% endif -%}
    where ranked.event_rank = 1
    {% if not is_incremental() %}
        and ranked.event_op != 'delete'
    {% endif %}
{%- endmacro %}
