{#
    dbt run-operation gdpr_erase                                   # every pending request
    dbt run-operation gdpr_erase --args '{subject_ids: ["P0000123"]}'   # these now (recorded as requests)
    dbt run-operation gdpr_erase --args '{dry_run: true}'          # rows per relation that would go

    The right to be forgotten, in order:
      1. legal holds: requests of subjects under hold become `held` and are left alone;
      2. claim the open requests (pending, failed, or erasing after a crash) as one batch;
      3. tombstone the subjects (keyed hash), so ingestion, rebuilds and snapshots can
         never bring them back (a write already under way is caught by step 6); only
         then read the plan's savepoint copies (a savepoint taken meanwhile re-erases its
         copy with the tombstone: it reads the tombstones after copying);
      4. per relation of the plan (erasure_plan: from the graph, DAG order), ONE batched
         MERGE against the whole batch (a small batch's MERGE reads only the files whose
         key range holds one of its pseudonym prefixes): WHEN MATCHED THEN DELETE, or UPDATE ... SET
         <subject key and PII columns> = NULL for on_erasure: anonymize; write
         conflicts retried (run_with_conflict_retry); every commit tagged with the
         request ids; evidence from the commit's Change Data Feed;
      5. shred: delete the subjects' keys from the vault, then REORG PURGE + VACUUM the
         vault alone at once (0 hours, LITE: only files the log removed), so every
         encrypted copy in history is unreadable immediately;
      6. sweep: one query counts the batch's rows left in every relation; a relation a
         concurrent write refilled (ingestion or a rebuild that read the tombstones
         before step 3 and committed after its relation was erased) is erased again;
      7. evidence per request and relation; requests become `erased`;
         `python -m python_jobs.purge` later makes them `purged`.
    Idempotent and resumable: every step is keyed by request and relation, counts are
    recomputed from the commits themselves, so a rerun after a crash completes the
    batch and never double-counts. Each step is a macro of its own in steps/.
#}

{% macro gdpr_erase(subject_ids=none, dry_run=false, reason=none, requested_by=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('gdpr_erase', kwargs, ['subject_ids', 'dry_run', 'reason', 'requested_by']) -%}
    {{ return(adapter.dispatch('gdpr_erase', 'gdpr_lakehouse')(subject_ids, dry_run, reason, requested_by)) }}
{%- endmacro %}

{% macro spark__gdpr_erase(subject_ids, dry_run, reason, requested_by) -%}
    {%- set dry_run = gdpr_lakehouse._validate_flag(dry_run, 'dry_run') -%}
    {%- set ids = gdpr_lakehouse._erase_arguments(subject_ids, reason, requested_by) -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- do gdpr_lakehouse._erase_preconditions() -%}
    {%- set ctx = gdpr_lakehouse._erase_context() -%}
    {%- if dry_run -%}
        {{ return(gdpr_lakehouse._erasure_dry_run(gdpr_lakehouse.erasure_plan(), ctx, ids)) }}
    {%- endif -%}
    {%- if ids is not none -%}
        {%- do gdpr_lakehouse.request_erasure(ids, reason, requested_by) -%}
    {%- endif -%}
    {%- set started = modules.datetime.datetime.utcnow() -%}
    {#- a restore_version that died between its RESTORE and the re-erasure is healed first -#}
    {%- do gdpr_lakehouse.heal_interrupted_restores(gdpr_lakehouse._restore_context()) -%}
    {%- set request_ids = gdpr_lakehouse._erase_claim_batch(ctx, ids) -%}
    {%- if not request_ids -%}{{ return([]) }}{%- endif -%}
    {%- set plan = gdpr_lakehouse._erase_tombstones(ctx) -%}
    {%- set outcomes = gdpr_lakehouse._erase_relations(plan, ctx) -%}
    {%- do gdpr_lakehouse._erase_reapply_earlier(ctx) -%}
    {%- do gdpr_lakehouse._erase_complete(outcomes, ctx) -%}
    {%- do gdpr_lakehouse._print_erasure(outcomes, ctx, started) -%}
    {{ return(request_ids) }}
{%- endmacro %}

{#- Step 6, the sweep: count the batch's rows still in each erased relation, in one query, and
    erase again where a concurrent write brought some back (up to 3 rounds; the
    evidence then counts every erasure commit of the batch). A relation whose newest
    commit is still this batch's erasure, made from the version just before it, cannot
    hold a row of the batch (that commit removed every one its snapshot held, and
    nothing committed since): it is not counted, which spares a scan of the whole
    relation. Any other commit since, or one between the erasure's read and its
    commit (Delta lets a blind append through), and it is counted. A relation of
    another subject type than every subject of the batch is not counted either: its
    key set is empty (_batch_source), as it was for the write. Returns the outcomes. -#}
{% macro _sweep(outcomes, ctx) -%}
    {%- set ns = namespace(swept=outcomes, done=false) -%}
    {%- for round in range(3) if not ns.done -%}
        {%- set checks = [] -%}
        {%- for outcome in ns.swept if outcome.step.action != 'shred' and outcome.status == 'erased'
              and outcome.get('applies', true) and not gdpr_lakehouse._untouched_since_erasure(outcome) -%}
            {%- do checks.append("select " ~ ns.swept.index(outcome) ~ " as position, count(*) as left_rows from "
                ~ outcome.step.relation ~ " as target where target." ~ adapter.quote(outcome.step.key)
                ~ " in (select erase_key from (" ~ gdpr_lakehouse._batch_source(outcome.step, gdpr_lakehouse._batch_base(ctx))
                ~ ") as batch)" ~ (gdpr_lakehouse._pruning_predicate('target.' ~ adapter.quote(outcome.step.key), ctx.get('prune_prefixes'))
                if outcome.step.key_kind == 'pseudonym' else '')) -%}
        {%- endfor -%}
        {%- set back = {} -%}
        {%- for row in (run_query(checks | join('\nunion all\n')) if checks else []) if row[1] | int > 0 -%}
            {%- do back.update({row[0] | int: row[1] | int}) -%}
        {%- endfor -%}
        {%- set again = [] -%}
        {%- for outcome in ns.swept -%}
            {%- if loop.index0 in back -%}
                {%- do log('gdpr_erase: ' ~ outcome.step.relation_name ~ ': ' ~ back[loop.index0]
                    ~ ' row(s) of the batch came back (a concurrent write); erased again', info=true) -%}
                {%- set redo = gdpr_lakehouse._erase_relation(outcome.step, ctx) -%}
                {%- do redo.update({'attempts': outcome.attempts + redo.attempts}) -%}
                {%- do again.append(redo) -%}
            {%- else -%}
                {%- do again.append(outcome) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- set ns.swept = again -%}
        {%- set ns.done = not back -%}
    {%- endfor -%}
    {{ return(ns.swept) }}
{%- endmacro %}

{#- True when the relation's newest commit is one of the outcome's erasure commits and
    was made from the version just before it (its readVersion): nothing else committed
    since that erasure read the relation. Any doubt (no commit of ours, no readVersion)
    is false: the relation is counted. -#}
{% macro _untouched_since_erasure(outcome) -%}
    {%- if not (execute and outcome.versions) -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set newest = run_query('describe history ' ~ outcome.step.relation ~ ' limit 1').rows[0] -%}
    {%- set version = newest['version'] | int -%}
    {%- set read = newest['readVersion'] -%}
    {{ return(version in outcome.versions and read is not none and (read | int) == version - 1) }}
{%- endmacro %}

{#- Crash injection for the reliability suite: with var erasure_crash_after set to a
    step (claim, tombstone, a relation of the plan such as bronze.patients,
    shred:deleted, shred:reorg, evidence), the run stops dead right after that step
    has committed, as a killed process would: nothing after it runs, nothing is
    cleaned up. The next gdpr_erase must finish the batch. Unset: a no-op. -#}
{% macro _crash_point(step) -%}
    {%- if var('erasure_crash_after', none) == step -%}
        {%- do exceptions.raise_compiler_error('gdpr_erase: crash injected after step ' ~ step ~ ' (var erasure_crash_after)') -%}
    {%- endif -%}
{%- endmacro %}
