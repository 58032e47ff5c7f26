{#
    dbt run-operation request_erasure --args '{subject_ids: ["P0000123"], reason: "...", requested_by: "...", received_at: "2026-02-10"}'

    Records one erasure request per subject in privacy.erasure_requests (status
    pending). received_at is when the controller received it (default: now; a date or a
    time, not in the future); the deadline is one calendar month after that day (var
    request_deadline, macro request_deadline: received on 10 February, due by the end
    of 10 March). Idempotent: a
    subject that already has an open request (pending, erasing, held, failed) keeps it
    and gets no second one. Prints the open requests of the given subjects and
    returns their request ids. `dbt run-operation gdpr_erase` processes them.
#}
{% macro request_erasure(subject_ids=none, reason=none, requested_by=none, received_at=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('request_erasure', kwargs, ['subject_ids', 'reason', 'requested_by', 'received_at']) -%}
    {{ return(adapter.dispatch('request_erasure', 'gdpr_lakehouse')(subject_ids, reason, requested_by, received_at)) }}
{%- endmacro %}

{% macro spark__request_erasure(subject_ids, reason, requested_by, received_at=none) -%}
    {%- set ids = gdpr_lakehouse._validate_subject_ids(subject_ids) -%}
    {%- set reason = gdpr_lakehouse._validate_text(reason, 'reason', default='erasure requested by the data subject (GDPR Art. 17)') -%}
    {%- set requested_by = gdpr_lakehouse._validate_text(requested_by, 'requested_by', default=gdpr_lakehouse._actor(), max_length=128) -%}
    {%- set received = gdpr_lakehouse._validate_moment(received_at, 'received_at') if received_at is not none
        else run_started_at.astimezone(modules.pytz.utc) -%}
    {%- set deadline = gdpr_lakehouse.request_deadline(received) -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set requests = gdpr_lakehouse._control_relation('privacy_erasure_requests') -%}
    {%- set merge_sql -%}
merge into {{ requests }} as requests
using (
    select * from values
    {%- for subject_id in ids %}
        ('{{ gdpr_lakehouse.request_id('erasure', run_started_at, invocation_id ~ ":" ~ subject_id) }}', {{ gdpr_lakehouse._sql_string(subject_id) }}){{ ',' if not loop.last }}
    {%- endfor %}
    as incoming (request_id, subject_id)
) as incoming
on requests.subject_id = incoming.subject_id
    and requests.status in {{ gdpr_lakehouse.request_status_in('unfinished') }}
when not matched then insert (
    request_id, subject_id, subject_type, subject_pseudonym, reason, requested_by,
    received_at, deadline, status, status_reason, batch_id, shredded_at, erased_at, purged_at, updated_at
) values (
    incoming.request_id, incoming.subject_id, null, null, {{ gdpr_lakehouse._sql_string(reason) }},
    {{ gdpr_lakehouse._sql_string(requested_by) }}, timestamp'{{ received.strftime('%Y-%m-%d %H:%M:%S') }}+00:00',
    timestamp'{{ deadline }}+00:00', 'pending', null, null, null, null, null,
    current_timestamp()
)
    {%- endset -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='request_erasure')) -%}
    {%- do run_query(merge_sql) -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- set open_requests = gdpr_lakehouse._requests_of(requests, ids) -%}
    {%- do gdpr_lakehouse.print_table('Erasure requests (' ~ open_requests | length ~ ' open for the ' ~ ids | length ~ ' subject(s) given):',
        ['request_id', 'subject_id', 'status', 'received_at', 'deadline'], open_requests,
        limit=20, rest='every one is in ' ~ requests) -%}
    {%- set request_ids = [] -%}
    {%- for row in open_requests -%}{%- do request_ids.append(row[0]) -%}{%- endfor -%}
    {{ return(request_ids) }}
{%- endmacro %}

{#- The open requests of the given subject ids: [request_id, subject_id, status, received_at, deadline]. -#}
{% macro _requests_of(requests, ids) -%}
    {%- set rows = [] -%}
    {%- set query -%}
select request_id, subject_id, status, cast(received_at as string), cast(deadline as string)
from {{ requests }}
where status in {{ gdpr_lakehouse.request_status_in('unfinished') }}
    and subject_id in ({% for subject_id in ids %}{{ gdpr_lakehouse._sql_string(subject_id) }}{{ ', ' if not loop.last }}{% endfor %})
order by subject_id
    {%- endset -%}
    {%- for row in run_query(query) -%}
        {%- do rows.append([row[0], row[1], row[2], (row[3] or '')[:19], (row[4] or '')[:19]]) -%}
    {%- endfor -%}
    {{ return(rows) }}
{%- endmacro %}
