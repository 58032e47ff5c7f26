{#
    dbt run-operation extend_deadline --args '{request_id: req-..., by: 2, reason: "...", subject_informed_on: "2026-03-01"}'

    Extends an open request's deadline (GDPR Art. 12(3): by up to two further months
    where necessary, taking into account the complexity and number of requests): an
    erasure (privacy.erasure_requests, any id but acc-/rec-), an access request (acc-...,
    privacy.access_requests, while pending) or a rectification (rec-...,
    privacy.rectification_requests, while pending or landed). `by`
    counts in var request_deadline's unit (months, or days); the periods granted add up
    to at most 3 months (90 days) from receipt. The law makes the controller tell the
    data subject, with the reasons, within one month of receipt: subject_informed_on
    is that day, on or after the receipt, not after the original deadline (else the
    extension is refused: it can no longer be lawful) and not in the future. The new
    deadline is counted from the day of receipt (31 January + 1 + 2 months: 30 April),
    never chained from the old one. Records by, reason and the day told on the request
    (deadline_extension, extension_reason, subject_informed_on), in a commit tagged
    purpose extend_deadline; prints the request. A finished request, an unknown id or
    a bad argument changes nothing.
#}
{% macro extend_deadline(request_id=none, by=none, reason=none, subject_informed_on=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('extend_deadline', kwargs, ['request_id', 'by', 'reason', 'subject_informed_on']) -%}
    {{ return(adapter.dispatch('extend_deadline', 'gdpr_lakehouse')(request_id, by, reason, subject_informed_on)) }}
{%- endmacro %}

{% macro spark__extend_deadline(request_id, by, reason, subject_informed_on) -%}
    {%- set usage = " (e.g. --args '{request_id: req-20260210T090000-0123456789, by: 2, reason: \"...\", subject_informed_on: \"2026-03-01\"}')" -%}
    {%- if request_id is not string or not modules.re.match('^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$', request_id) -%}
        {%- do exceptions.raise_compiler_error("extend_deadline: request_id " ~ (request_id | tojson)[:80]
            ~ " is not a request id (letters, digits, _ . : -)" ~ usage) -%}
    {%- endif -%}
    {%- set policy = gdpr_lakehouse._request_deadline_policy() -%}
    {%- set unit = policy.unit ~ 's' -%}
    {%- if by is none or reason is none or subject_informed_on is none -%}
        {%- do exceptions.raise_compiler_error("extend_deadline: give by (further " ~ unit ~ "), reason (why the request needs longer) and "
            ~ "subject_informed_on (the day the data subject was told, with the reasons: GDPR Art. 12(3))" ~ usage) -%}
    {%- endif -%}
    {%- set by = gdpr_lakehouse._validate_whole(by, 'extend_deadline: by (further ' ~ unit ~ ')', 1, policy.most - policy.count) -%}
    {%- set reason = gdpr_lakehouse._validate_text(reason, 'reason') -%}
    {%- set informed = gdpr_lakehouse._validate_moment(subject_informed_on, 'subject_informed_on') -%}
    {#- the request's log, by the prefix of its id; the states in which it can still be given longer -#}
    {%- if request_id.startswith(gdpr_lakehouse._request_id_prefix('access') ~ '-') -%}
        {%- set model, unfinished = 'privacy_access_requests', ['pending'] -%}
    {%- elif request_id.startswith(gdpr_lakehouse._request_id_prefix('rectification') ~ '-') -%}
        {%- set model, unfinished = 'privacy_rectification_requests', ['pending', 'landed'] -%}
    {%- else -%}
        {%- set model, unfinished = 'privacy_erasure_requests', gdpr_lakehouse.request_states().unfinished -%}
    {%- endif -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set requests = gdpr_lakehouse._control_relation(model, ['deadline_extension', 'extension_reason', 'subject_informed_on']) -%}
    {%- set found = run_query("select request_id, status, cast(received_at as string), cast(deadline as string), "
        ~ "coalesce(deadline_extension, 0) from " ~ requests ~ " where request_id = " ~ gdpr_lakehouse._sql_string(request_id)) -%}
    {%- if found | length != 1 -%}
        {%- do exceptions.raise_compiler_error("extend_deadline: " ~ ("no request " if found | length == 0 else "more than one request ")
            ~ request_id ~ " in " ~ requests ~ "; nothing changed") -%}
    {%- endif -%}
    {%- set row = found[0] -%}
    {%- if row[1] not in unfinished -%}
        {%- do exceptions.raise_compiler_error("extend_deadline: request " ~ request_id ~ " is " ~ row[1] ~ "; only an unfinished request ("
            ~ unfinished | join(', ') ~ ") can be given longer; nothing changed") -%}
    {%- endif -%}
    {%- set received = row[2][:10] -%}
    {%- set total = (row[4] | int) + by -%}
    {%- if total > policy.most - policy.count -%}
        {%- do exceptions.raise_compiler_error("extend_deadline: request " ~ request_id ~ " was already extended by " ~ row[4] ~ " " ~ unit
            ~ "; " ~ by ~ " more would make " ~ total ~ ", past the " ~ (policy.most - policy.count) ~ " further " ~ unit
            ~ " the law allows (GDPR Art. 12(3)); nothing changed") -%}
    {%- endif -%}
    {%- set original = gdpr_lakehouse.request_deadline(received) -%}
    {%- set told = informed.strftime('%Y-%m-%d') -%}
    {%- if told < received or told > original[:10] -%}
        {%- do exceptions.raise_compiler_error("extend_deadline: subject_informed_on " ~ told ~ " is not within the original period of request "
            ~ request_id ~ " (received " ~ received ~ ", due " ~ original[:10] ~ "): GDPR Art. 12(3) requires telling the data subject of "
            ~ "an extension, with the reasons, within one month of receipt; nothing changed") -%}
    {%- endif -%}
    {%- set deadline = gdpr_lakehouse.request_deadline(received, total) -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='extend_deadline', request_ids=[request_id])) -%}
    {%- do run_query("update " ~ requests ~ " set deadline = timestamp'" ~ deadline ~ "+00:00', deadline_extension = " ~ total
        ~ ", extension_reason = " ~ gdpr_lakehouse._sql_string(reason) ~ ", subject_informed_on = date'" ~ told
        ~ "', updated_at = current_timestamp() where request_id = " ~ gdpr_lakehouse._sql_string(request_id)
        ~ " and status in ('" ~ unfinished | join("', '") ~ "')") -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- set lines = [] -%}
    {%- for kept in run_query("select request_id, status, cast(received_at as string), cast(deadline as string), deadline_extension, "
          ~ "cast(subject_informed_on as string) from " ~ requests ~ " where request_id = " ~ gdpr_lakehouse._sql_string(request_id)) -%}
        {%- do lines.append([kept[0], kept[1], (kept[2] or '')[:19], (kept[3] or '')[:19], (kept[4] | string) ~ ' ' ~ unit, kept[5]]) -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table('Request ' ~ request_id ~ ' extended:',
        ['request_id', 'status', 'received_at', 'deadline', 'extended_by', 'subject_informed_on'], lines) -%}
    {{ return(deadline) }}
{%- endmacro %}
