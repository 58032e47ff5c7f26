{#- Open requests (pending, erasing, failed) past their deadline; held ones are lawful
    (Art. 17(3)) and listed by the GDPR report instead. -#}
{% macro overdue_requests_sql(requests) -%}
    {{ return(adapter.dispatch('overdue_requests_sql', 'gdpr_lakehouse')(requests)) }}
{%- endmacro %}

{% macro spark__overdue_requests_sql(requests) -%}
select
    request_id,
    status,
    received_at,
    deadline,
    datediff(current_timestamp(), deadline) as days_overdue
from {{ requests }}
where status in {{ gdpr_lakehouse.request_status_in('open') }}
    and deadline < current_timestamp()
{%- endmacro %}
