{#- Erased requests past their purge deadline, erased_at + var purge_deadline_days
    (an erased request without erased_at counts as overdue: fail closed). -#}
{% macro unpurged_requests_sql(requests) -%}
    {{ return(adapter.dispatch('unpurged_requests_sql', 'gdpr_lakehouse')(requests)) }}
{%- endmacro %}

{% macro spark__unpurged_requests_sql(requests) -%}
{%- set deadline = gdpr_lakehouse.purge_deadline_of('erased_at') -%}
select
    request_id,
    status,
    erased_at,
    {{ deadline }} as purge_deadline,
    datediff(current_timestamp(), {{ deadline }}) as days_overdue
from {{ requests }}
where status = 'erased'
    and coalesce({{ deadline }} < current_timestamp(), true)
{%- endmacro %}
