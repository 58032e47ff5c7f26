{#
    dbt run-operation reapply_erasures                             # repair
    dbt run-operation reapply_erasures --args '{dry_run: true}'    # rows of erased subjects, per relation

    Re-apply every tombstone to every relation of the erasure plan, savepoint copies
    included: the repair when a rollback made outside the engine (a RESTORE TABLE typed
    by hand, a backup copied in, a table rebuilt from an old extract) brought an erased
    person back, which the compliance test no_erased_subject_present reports. Each row's
    key is hashed under the tombstone key and matched to the tombstones' keyed hashes
    (the pseudonym's for relations keyed by pseudonym, the id's for the others), so it
    finds every erased subject, however long ago, with no map from id to pseudonym.
    One MERGE per relation that holds such rows (delete, or anonymize for on_erasure
    anonymize), tagged purpose reapply_erasure; then the count again, which must be 0
    everywhere, or the operation fails naming the relation. Idempotent: a second run
    finds nothing and writes nothing.
#}
{% macro reapply_erasures(dry_run=false) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('reapply_erasures', kwargs, ['dry_run']) -%}
    {{ return(adapter.dispatch('reapply_erasures', 'gdpr_lakehouse')(dry_run)) }}
{%- endmacro %}

{% macro spark__reapply_erasures(dry_run) -%}
    {%- set dry_run = gdpr_lakehouse._validate_flag(dry_run, 'dry_run') -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- do gdpr_lakehouse.assert_key_envelope() -%}
    {%- set ctx = gdpr_lakehouse._restore_context() -%}
    {%- set plan = gdpr_lakehouse.erasure_plan() -%}
    {%- do gdpr_lakehouse._refuse_clones(plan, 'reapply_erasures') -%}
    {%- set steps = gdpr_lakehouse._present_steps(plan) -%}
    {%- set before = gdpr_lakehouse._tombstoned_rows(steps, ctx) -%}
    {%- if dry_run or not before -%}
        {%- do gdpr_lakehouse.print_table('reapply_erasures' ~ (' (dry run)' if dry_run else '') ~ ': rows of erased subjects in '
            ~ before | length ~ ' of ' ~ steps | length ~ ' relation(s) of the plan' ~ ('' if before else '; nothing to do'),
            ['relation', 'rows of erased subjects'], before.items() | list) -%}
        {{ return(before) }}
    {%- endif -%}
    {%- set restore_id = 'rea-' ~ run_started_at.strftime('%Y%m%dT%H%M%S') ~ '-' ~ local_md5(invocation_id)[:10] -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='reapply_erasure', extra={'restore_id': restore_id})) -%}
    {%- for step in steps if step.relation_name in before -%}
        {%- set result = gdpr_lakehouse.run_with_conflict_retry(gdpr_lakehouse._erase_merge_sql(step, gdpr_lakehouse._erased_keys_sql(step, ctx))) -%}
        {%- if not result.done -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
            {%- do exceptions.raise_compiler_error("reapply_erasures: " ~ step.relation_name ~ ": every one of " ~ result.attempts
                ~ " attempts lost a write conflict to a concurrent writer (Delta SQLSTATE 2D521); run it again") -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- set after = gdpr_lakehouse._tombstoned_rows(steps, ctx) -%}
    {%- set lines = [] -%}
    {%- for relation, rows in before.items() -%}
        {%- do lines.append([relation, rows, after.get(relation, 0)]) -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table('reapply_erasures ' ~ restore_id ~ ': erased subjects removed again from ' ~ before | length ~ ' relation(s):',
        ['relation', 'rows before', 'rows after'], lines) -%}
    {%- if after -%}
        {%- do exceptions.raise_compiler_error("reapply_erasures: rows of erased subjects are still in " ~ after.keys() | join(', ')
            ~ " after the re-erasure") -%}
    {%- endif -%}
    {{ return(after) }}
{%- endmacro %}

{#- The steps of `plan` (not the vault's shred) whose relation exists. -#}
{% macro _present_steps(plan) -%}
    {%- set steps = [] -%}
    {%- for step in plan if step.action != 'shred'
          and adapter.get_relation(database=none, schema=step.relation.schema, identifier=step.relation.identifier) is not none -%}
        {%- do steps.append(step) -%}
    {%- endfor -%}
    {{ return(steps) }}
{%- endmacro %}

{#- {relation name: rows whose key an erasure tombstoned}, for the relations that hold
    any (one query: _tombstoned_rows_sql). -#}
{% macro _tombstoned_rows(steps, ctx) -%}
    {%- set found = {} -%}
    {%- if steps -%}
        {%- for row in run_query(gdpr_lakehouse._tombstoned_rows_sql(steps, ctx)) -%}
            {%- do found.update({row[0]: row[1] | int}) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(found) }}
{%- endmacro %}

{#- Per relation of `steps`, the rows whose key is an erased subject's id or pseudonym
    (every tombstone), as (relation, rows_of_erased_subjects); relations with none are
    left out. One semi join per relation: each row counted once, however many
    tombstones its subject has (the keys are hashed row by row, in a projection: macro
    tombstone_hash). The compliance test no_erased_subject_present is this query. -#}
{% macro _tombstoned_rows_sql(steps, ctx) -%}
{%- for step in steps %}
select
    '{{ step.relation_name }}' as relation,
    count(*) as rows_of_erased_subjects
from (
    select {{ gdpr_lakehouse.tombstone_hash('data.' ~ adapter.quote(step.key), keys=ctx.system_keys) }} as erase_hash
    from {{ step.relation }} as data
) as target
left semi join {{ ctx.tombstones }} as tombstones
    on tombstones.{{ 'pseudonym_hash' if step.key_kind == 'pseudonym' else 'subject_hash' }} = target.erase_hash
having count(*) > 0
{{ 'union all' if not loop.last }}
{%- endfor %}
{%- if not steps %}
select cast(null as string) as relation, cast(0 as bigint) as rows_of_erased_subjects
where false
{%- endif %}
{%- endmacro %}
