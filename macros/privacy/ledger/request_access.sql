{#
    dbt run-operation request_access --args '{subject_ids: ["P0000010"], requested_by: "...", received_at: "2026-11-20"}'

    Records one access request (GDPR Art. 15, and Art. 20's portable copy) per subject in
    privacy.access_requests, status pending, deadline one calendar month after the day
    of receipt (the erasure requests' rule: var request_deadline, macro
    request_deadline). Idempotent: a subject with a pending access request keeps it.
    `python -m python_jobs.subject_access` answers every pending request (or one
    subject's with --subject-id): the export, "no data held", or refused while the
    subject's erasure is open. Prints the pending requests of the given subjects and
    returns their ids.
#}
{% macro request_access(subject_ids=none, requested_by=none, received_at=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('request_access', kwargs, ['subject_ids', 'requested_by', 'received_at']) -%}
    {{ return(adapter.dispatch('request_access', 'gdpr_lakehouse')(subject_ids, requested_by, received_at)) }}
{%- endmacro %}

{% macro spark__request_access(subject_ids, requested_by, received_at=none) -%}
    {%- set ids = gdpr_lakehouse._validate_subject_ids(subject_ids) -%}
    {%- set requested_by = gdpr_lakehouse._validate_text(requested_by, 'requested_by', default=gdpr_lakehouse._actor(), max_length=128) -%}
    {%- set received = gdpr_lakehouse._validate_moment(received_at, 'received_at') if received_at is not none
        else run_started_at.astimezone(modules.pytz.utc) -%}
    {%- set deadline = gdpr_lakehouse.request_deadline(received) -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set requests = gdpr_lakehouse._control_relation('privacy_access_requests') -%}
    {%- set merge_sql -%}
merge into {{ requests }} as requests
using (
    select * from values
    {%- for subject_id in ids %}
        ('{{ gdpr_lakehouse.request_id('access', run_started_at, invocation_id ~ ":" ~ subject_id) }}', {{ gdpr_lakehouse._sql_string(subject_id) }}){{ ',' if not loop.last }}
    {%- endfor %}
    as incoming (request_id, subject_id)
) as incoming
on requests.subject_id = incoming.subject_id
    and requests.status = 'pending'
when not matched then insert (
    request_id, subject_id, subject_type, requested_by, received_at, deadline, status,
    status_reason, relations_exported, rows_exported, export_path, package_sha256,
    completed_at, export_deleted_at, updated_at
) values (
    incoming.request_id, incoming.subject_id, null, {{ gdpr_lakehouse._sql_string(requested_by) }},
    timestamp'{{ received.strftime('%Y-%m-%d %H:%M:%S') }}+00:00', timestamp'{{ deadline }}+00:00',
    'pending', null, null, null, null, null, null, null, current_timestamp()
)
    {%- endset -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='request_access')) -%}
    {%- do run_query(merge_sql) -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- set query -%}
select request_id, subject_id, status, cast(received_at as string), cast(deadline as string)
from {{ requests }}
where status = 'pending'
    and subject_id in ({% for subject_id in ids %}{{ gdpr_lakehouse._sql_string(subject_id) }}{{ ', ' if not loop.last }}{% endfor %})
order by subject_id
    {%- endset -%}
    {%- set rows = [] -%}
    {%- for row in run_query(query) -%}
        {%- do rows.append([row[0], row[1], row[2], (row[3] or '')[:19], (row[4] or '')[:19]]) -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table('Access requests (' ~ rows | length ~ ' pending for the ' ~ ids | length ~ ' subject(s) given; '
        ~ 'python -m python_jobs.subject_access answers them):',
        ['request_id', 'subject_id', 'status', 'received_at', 'deadline'], rows) -%}
    {%- set request_ids = [] -%}
    {%- for row in rows -%}{%- do request_ids.append(row[0]) -%}{%- endfor -%}
    {{ return(request_ids) }}
{%- endmacro %}
