{#
    The newest event per key from a landing table of CDC events (_op, _source_ts).
    Incremental runs read only events newer than the target's high-water mark
    (max source_updated_at); the first run drops keys whose newest event is a delete.
    Ties at one timestamp resolve delete > update > insert.
#}
{% macro cdc_latest_events(relation, key) -%}
    select * from (
        select
            *,
            row_number() over (
                partition by {{ key }}
                order by _source_ts desc,
                    case _op when 'delete' then 2 when 'update' then 1 else 0 end desc
            ) as event_rank
        from {{ relation }}
        where {{ key }} is not null
            and _source_ts is not null
            and _op in ('insert', 'update', 'delete')
        {% if is_incremental() %}
            and _source_ts > (
                select coalesce(max(source_updated_at), timestamp '1900-01-01 00:00:00') from {{ this }}
            )
        {% endif %}
    ) as ranked
    where event_rank = 1
    {% if not is_incremental() %}
        and _op != 'delete'
    {% endif %}
{%- endmacro %}
