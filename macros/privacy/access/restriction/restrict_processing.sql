{#
    dbt run-operation restrict_processing --args '{subject_ids: ["P0000123"], reason: "accuracy contested (Art. 18(1)(a))"}'
    dbt run-operation restrict_processing --args '{subject_ids: ["P0000123"], lift: true}'

    Restricts processing of a subject's data (GDPR Art. 18), or lifts the restriction:
    the data is kept in bronze, silver and the snapshots (and still erasable), but no
    per-subject gold row and no row of the consumers' masked views shows the subject
    while it is active (macro not_restricted): the views at once, the gold tables from
    their next build. A legal hold restricts the same way. Idempotent: an active
    restriction is not placed twice. Prints the subjects' restrictions.

    Every restriction has a review date (review_on, default var restriction_review_days
    after today, 30): `report` alerts once it has passed. Given without a reason,
    review_on moves the review date of the subjects' active restrictions.
#}
{% macro restrict_processing(subject_ids=none, reason=none, placed_by=none, lift=false, review_on=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('restrict_processing', kwargs, ['subject_ids', 'reason', 'placed_by', 'lift', 'review_on']) -%}
    {{ return(adapter.dispatch('restrict_processing', 'gdpr_lakehouse')(subject_ids, reason, placed_by, lift, review_on)) }}
{%- endmacro %}

{% macro spark__restrict_processing(subject_ids, reason, placed_by, lift, review_on) -%}
    {%- set ids = gdpr_lakehouse._validate_subject_ids(subject_ids) -%}
    {%- set lift = gdpr_lakehouse._validate_flag(lift, 'lift') -%}
    {%- set review_on = gdpr_lakehouse._validate_day(review_on, 'review_on', true) -%}
    {%- set updating = not lift and reason is none and review_on is not none -%}
    {%- if lift and review_on is not none -%}
        {%- do exceptions.raise_compiler_error("restrict_processing: review_on describes an active restriction; lifting takes none") -%}
    {%- endif -%}
    {%- if not lift and reason is none and not updating -%}
        {%- do exceptions.raise_compiler_error("restrict_processing: give the reason (GDPR Art. 18(1): accuracy contested, unlawful processing, needed for a claim, objection pending)") -%}
    {%- endif -%}
    {%- set review_days = gdpr_lakehouse._validate_whole(var('restriction_review_days', 30), 'var restriction_review_days', 1, 3650) -%}
    {%- set reason = gdpr_lakehouse._validate_text(reason, 'reason') -%}
    {%- set actor = gdpr_lakehouse._validate_text(placed_by, 'placed_by', default=gdpr_lakehouse._actor(), max_length=128) -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set restrictions = gdpr_lakehouse._control_relation('privacy_restrictions', ['review_on']) -%}
    {%- set id_list -%}{% for subject_id in ids %}{{ gdpr_lakehouse._sql_string(subject_id) }}{{ ', ' if not loop.last }}{% endfor %}{%- endset -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='lift_restriction' if lift else 'restrict_processing')) -%}
    {%- set review_sql = ("date'" ~ review_on ~ "'") if review_on else 'null' -%}
    {%- if updating -%}
        {%- set active = run_query("select distinct subject_id from " ~ restrictions ~ " where lifted_at is null and subject_id in (" ~ id_list ~ ")")
            .columns[0].values() | list -%}
        {%- set missing = ids | reject('in', active) | list -%}
        {%- if missing -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
            {%- do exceptions.raise_compiler_error("restrict_processing: no active restriction of " ~ missing | join(', ')
                ~ " to update; give the reason to place one. Nothing was changed") -%}
        {%- endif -%}
        {%- do run_query("update " ~ restrictions ~ " set review_on = " ~ review_sql
            ~ " where lifted_at is null and subject_id in (" ~ id_list ~ ")") -%}
    {%- elif lift -%}
        {%- do run_query("update " ~ restrictions ~ " set lifted_at = current_timestamp(), lifted_by = " ~ gdpr_lakehouse._sql_string(actor)
            ~ " where lifted_at is null and subject_id in (" ~ id_list ~ ")") -%}
    {%- else -%}
        {%- set merge_sql -%}
merge into {{ restrictions }} as restrictions
using (
    select * from values
    {%- for subject_id in ids %}
        ({{ gdpr_lakehouse._sql_string(subject_id) }}){{ ',' if not loop.last }}
    {%- endfor %}
    as incoming (subject_id)
) as incoming
on restrictions.subject_id = incoming.subject_id and restrictions.lifted_at is null
when not matched then insert (subject_id, reason, placed_by, placed_at, lifted_by, lifted_at, review_on)
values (incoming.subject_id, {{ gdpr_lakehouse._sql_string(reason) }}, {{ gdpr_lakehouse._sql_string(actor) }}, current_timestamp(), null, null,
        coalesce({{ review_sql }}, date_add(current_date(), {{ review_days }})))
        {%- endset -%}
        {%- do run_query(merge_sql) -%}
        {%- do gdpr_lakehouse._unpublish(ids) -%}
    {%- endif -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- set lines = [] -%}
    {%- for row in run_query("select subject_id, reason, placed_by, cast(placed_at as string), cast(lifted_at as string), cast(review_on as string) from "
          ~ restrictions ~ " where subject_id in (" ~ id_list ~ ") order by subject_id, placed_at") -%}
        {%- do lines.append([row[0], row[1], row[2], (row[3] or '')[:19], (row[4] or 'active')[:19], row[5] or '']) -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table('Restrictions of processing of the ' ~ ids | length ~ ' subject(s) given'
        ~ ' (masked views at once; per-subject gold from its next build):',
        ['subject_id', 'reason', 'placed_by', 'placed_at', 'lifted_at', 'review_on'], lines) -%}
{%- endmacro %}
