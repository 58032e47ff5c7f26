{#
    dbt run-operation legal_hold --args '{subject_ids: ["P0000123"], reason: "litigation case 2026-17"}'
    dbt run-operation legal_hold --args '{subject_ids: ["P0000123"], release: true}'

    Places (or releases) a legal hold: a subject whose records a law or a court
    requires keeping. gdpr_erase does not erase a subject under hold; their requests
    become `held` with the hold's reason, and are taken up again once it is released.
    A hold also restricts processing (GDPR Art. 18(1)(c)): the subject's rows leave the
    per-subject tables consumers read at once and stay out of them and of the masked
    views while it is active (macro not_restricted).
    Idempotent: an active hold is not placed twice (a review_on or notified_on given
    with it is recorded on the active hold; its reason stays).

    Every hold has a review date (review_on, default var legal_hold_review_days after
    today, 365): `report` alerts once it has passed. notified_on records the day the
    subject was told that their erasure was refused and why (GDPR Art. 12(4)); `report`
    alerts on a held request past its deadline whose hold records no notice. Given
    without a reason, review_on and notified_on update the subjects' active holds:

    dbt run-operation legal_hold --args '{subject_ids: ["P0000123"], notified_on: "2026-11-20", review_on: "2027-11-20"}'
#}
{% macro legal_hold(subject_ids=none, reason=none, placed_by=none, release=false, review_on=none, notified_on=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('legal_hold', kwargs, ['subject_ids', 'reason', 'placed_by', 'release', 'review_on', 'notified_on']) -%}
    {{ return(adapter.dispatch('legal_hold', 'gdpr_lakehouse')(subject_ids, reason, placed_by, release, review_on, notified_on)) }}
{%- endmacro %}

{% macro spark__legal_hold(subject_ids, reason, placed_by, release, review_on, notified_on) -%}
    {%- set ids = gdpr_lakehouse._validate_subject_ids(subject_ids) -%}
    {%- set release = gdpr_lakehouse._validate_flag(release, 'release') -%}
    {%- set review_on = gdpr_lakehouse._validate_day(review_on, 'review_on', true) -%}
    {%- set notified_on = gdpr_lakehouse._validate_day(notified_on, 'notified_on', false) -%}
    {%- set updating = not release and reason is none and (review_on is not none or notified_on is not none) -%}
    {%- if release and (review_on is not none or notified_on is not none) -%}
        {%- do exceptions.raise_compiler_error("legal_hold: review_on and notified_on describe an active hold; a release takes neither") -%}
    {%- endif -%}
    {%- if not release and reason is none and not updating -%}
        {%- do exceptions.raise_compiler_error("legal_hold: give the reason (the law or case that requires keeping the records)") -%}
    {%- endif -%}
    {%- set review_days = gdpr_lakehouse._validate_whole(var('legal_hold_review_days', 365), 'var legal_hold_review_days', 1, 3650) -%}
    {%- set reason = gdpr_lakehouse._validate_text(reason, 'reason') -%}
    {%- set actor = gdpr_lakehouse._validate_text(placed_by, 'placed_by', default=gdpr_lakehouse._actor(), max_length=128) -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set holds = gdpr_lakehouse._control_relation('privacy_legal_holds', ['review_on', 'subject_notified_on']) -%}
    {%- set requests = gdpr_lakehouse._control_relation('privacy_erasure_requests') -%}
    {%- set id_list -%}{% for subject_id in ids %}{{ gdpr_lakehouse._sql_string(subject_id) }}{{ ', ' if not loop.last }}{% endfor %}{%- endset -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='release_legal_hold' if release else 'legal_hold')) -%}
    {%- set review_sql = ("date'" ~ review_on ~ "'") if review_on else 'null' -%}
    {%- set notified_sql = ("date'" ~ notified_on ~ "'") if notified_on else 'null' -%}
    {%- if updating -%}
        {%- set active = run_query("select distinct subject_id from " ~ holds ~ " where released_at is null and subject_id in (" ~ id_list ~ ")")
            .columns[0].values() | list -%}
        {%- set missing = ids | reject('in', active) | list -%}
        {%- if missing -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
            {%- do exceptions.raise_compiler_error("legal_hold: no active hold of " ~ missing | join(', ')
                ~ " to update; give the reason to place one. Nothing was changed") -%}
        {%- endif -%}
        {%- do run_query("update " ~ holds ~ " set review_on = coalesce(" ~ review_sql ~ ", review_on), subject_notified_on = coalesce("
            ~ notified_sql ~ ", subject_notified_on) where released_at is null and subject_id in (" ~ id_list ~ ")") -%}
    {%- elif release -%}
        {%- do run_query("update " ~ holds ~ " set released_at = current_timestamp(), released_by = " ~ gdpr_lakehouse._sql_string(actor)
            ~ " where released_at is null and subject_id in (" ~ id_list ~ ")") -%}
        {%- do run_query("update " ~ requests ~ " set status = 'pending', status_reason = null, updated_at = current_timestamp()"
            ~ " where status = 'held' and subject_id in (" ~ id_list ~ ")") -%}
    {%- else -%}
        {%- set merge_sql -%}
merge into {{ holds }} as holds
using (
    select * from values
    {%- for subject_id in ids %}
        ({{ gdpr_lakehouse._sql_string(subject_id) }}){{ ',' if not loop.last }}
    {%- endfor %}
    as incoming (subject_id)
) as incoming
on holds.subject_id = incoming.subject_id and holds.released_at is null
{#- an active hold keeps its reason; the dates given are recorded on it #}
{% if review_on or notified_on -%}
when matched then update set review_on = coalesce({{ review_sql }}, holds.review_on),
    subject_notified_on = coalesce({{ notified_sql }}, holds.subject_notified_on)
{% endif -%}
when not matched then insert (subject_id, reason, placed_by, placed_at, released_by, released_at, review_on, subject_notified_on)
values (incoming.subject_id, {{ gdpr_lakehouse._sql_string(reason) }}, {{ gdpr_lakehouse._sql_string(actor) }}, current_timestamp(), null, null,
        coalesce({{ review_sql }}, date_add(current_date(), {{ review_days }})), {{ notified_sql }})
        {%- endset -%}
        {%- do run_query(merge_sql) -%}
        {#- a hold restricts processing too (GDPR Art. 18(1)(c)): kept, not published -#}
        {%- do gdpr_lakehouse._unpublish(ids) -%}
    {%- endif -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- set lines = [] -%}
    {%- for row in run_query("select subject_id, reason, placed_by, cast(placed_at as string), cast(released_at as string), "
          ~ "cast(review_on as string), cast(subject_notified_on as string) from " ~ holds
          ~ " where subject_id in (" ~ id_list ~ ") order by subject_id, placed_at") -%}
        {%- do lines.append([row[0], row[1], row[2], (row[3] or '')[:19], (row[4] or 'active')[:19], row[5] or '', row[6] or '']) -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table('Legal holds of the ' ~ ids | length ~ ' subject(s) given:',
        ['subject_id', 'reason', 'placed_by', 'placed_at', 'released_at', 'review_on', 'notified_on'], lines) -%}
    {%- if not release -%}
        {%- set ctx = {'tombstones': gdpr_lakehouse._control_relation('privacy_erasure_tombstones'),
                       'system_keys': gdpr_lakehouse._control_relation('privacy_system_keys')} -%}
        {%- set begun = run_query("select request_id, subject_id, status from " ~ requests ~ " as requests where subject_id in (" ~ id_list
            ~ ") and " ~ gdpr_lakehouse._erasure_begun(ctx) ~ " order by subject_id") -%}
        {%- if begun.rows | length > 0 -%}
            {%- do gdpr_lakehouse.print_table('Too late for ' ~ begun.rows | length ~ ' request(s): their erasure has begun (tombstone written; '
                ~ 'rows or key may be gone, which cannot be undone). The next gdpr_erase finishes them:', ['request_id', 'subject_id', 'status'], begun.rows) -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
