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
    batch and never double-counts.
#}

{% macro gdpr_erase(subject_ids=none, dry_run=false, reason=none, requested_by=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('gdpr_erase', kwargs, ['subject_ids', 'dry_run', 'reason', 'requested_by']) -%}
    {{ return(adapter.dispatch('gdpr_erase', 'gdpr_lakehouse')(subject_ids, dry_run, reason, requested_by)) }}
{%- endmacro %}

{% macro spark__gdpr_erase(subject_ids, dry_run, reason, requested_by) -%}
    {%- set dry_run = gdpr_lakehouse._validate_flag(dry_run, 'dry_run') -%}
    {%- set ids = gdpr_lakehouse._validate_subject_ids(subject_ids) if subject_ids is not none else none -%}
    {%- if ids is none and (reason is not none or requested_by is not none) -%}
        {%- do exceptions.raise_compiler_error("gdpr_erase: reason and requested_by describe new requests; give them with subject_ids "
            ~ "(or record requests first with request_erasure)") -%}
    {%- endif -%}
    {%- do gdpr_lakehouse._validate_text(reason, 'reason') -%}
    {%- do gdpr_lakehouse._validate_text(requested_by, 'requested_by', max_length=128) -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- do gdpr_lakehouse.assert_key_envelope() -%}
    {#- a relation whose subject_type no subject feed keys would never be erased: refused
        before any write (a savepoint's copy has its relation's type) -#}
    {%- do gdpr_lakehouse.assert_known_subject_types(gdpr_lakehouse.erasure_plan(savepoints=false), 'gdpr_erase') -%}
    {#- a clone of a planned relation made outside the plan keeps the subject readable -#}
    {%- do gdpr_lakehouse._refuse_clones(gdpr_lakehouse.erasure_plan(), 'gdpr_erase') -%}
    {%- set ctx = {
        'requests': gdpr_lakehouse._control_relation('privacy_erasure_requests'),
        'evidence': gdpr_lakehouse._control_relation('privacy_erasure_evidence'),
        'tombstones': gdpr_lakehouse._control_relation('privacy_erasure_tombstones'),
        'holds': gdpr_lakehouse._control_relation('privacy_legal_holds'),
        'vault': gdpr_lakehouse._control_relation('privacy_subject_keys'),
        'system_keys': gdpr_lakehouse._control_relation('privacy_system_keys'),
        'batch': invocation_id,
        'pruning': gdpr_lakehouse._pruning_settings(),
    } -%}
    {%- if dry_run -%}
        {{ return(gdpr_lakehouse._erasure_dry_run(gdpr_lakehouse.erasure_plan(), ctx, ids)) }}
    {%- endif -%}
    {%- if ids is not none -%}
        {%- do gdpr_lakehouse.request_erasure(ids, reason, requested_by) -%}
    {%- endif -%}
    {%- set started = modules.datetime.datetime.utcnow() -%}
    {#- a restore_version that died between its RESTORE and the re-erasure is healed first -#}
    {%- do gdpr_lakehouse.heal_interrupted_restores(gdpr_lakehouse._restore_context()) -%}

    {#- 1-2. legal holds, then claim the batch. A batch a crashed run left `erasing`
        (or a conflict left `failed`) is resumed under its own id: this run's commits
        carry it too, and new requests join it, so every commit of the batch, whichever
        run made it, is found by its tag and counted once. -#}
    {%- set interrupted = run_query("select distinct batch_id from " ~ ctx.requests
        ~ " where status in " ~ gdpr_lakehouse.request_status_in('begun') ~ " and batch_id is not null order by batch_id").columns[0].values() | list -%}
    {%- if interrupted -%}
        {%- if not modules.re.match('^[A-Za-z0-9_-]{1,64}$', interrupted[0] | string) -%}
            {%- do exceptions.raise_compiler_error("gdpr_erase: " ~ ctx.requests ~ " holds an interrupted batch id that is not one gdpr_erase writes: "
                ~ (interrupted[0] | string)[:80] ~ "; fix that row by hand") -%}
        {%- endif -%}
        {%- do ctx.update({'batch': interrupted[0], 'resumed': true}) -%}
    {%- endif -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='erase', batch_id=ctx.batch)) -%}
    {%- if gdpr_lakehouse.scalar_query('select count(*) from ' ~ ctx.holds ~ ' where released_at is null', 0) | int > 0 -%}
        {%- set late = run_query("select requests.request_id, requests.subject_id, min(holds.reason) from " ~ ctx.requests ~ " as requests inner join "
            ~ ctx.holds ~ " as holds on requests.subject_id = holds.subject_id and holds.released_at is null where "
            ~ gdpr_lakehouse._erasure_begun(ctx) ~ gdpr_lakehouse._subject_filter(ids, 'requests.subject_id')
            ~ " group by requests.request_id, requests.subject_id order by requests.subject_id") -%}
        {%- if late.rows | length > 0 -%}
            {%- do gdpr_lakehouse.print_table(late.rows | length ~ ' request(s) under a legal hold placed after their erasure had begun '
                ~ '(tombstone written, rows or key possibly gone: that cannot be undone); finishing them:', ['request_id', 'subject_id', 'hold'], late.rows) -%}
        {%- endif -%}
        {%- do run_query(gdpr_lakehouse._hold_requests_sql(ctx, ids)) -%}
    {%- endif -%}
    {%- do run_query(gdpr_lakehouse._claim_requests_sql(ctx, ids)) -%}
    {%- do gdpr_lakehouse._crash_point('claim') -%}
    {%- set claimed = run_query(gdpr_lakehouse._batch_base(ctx) ~ ' order by subject_id') -%}
    {%- set held = run_query("select request_id, subject_id, status_reason from " ~ ctx.requests ~ " where status = 'held'"
        ~ gdpr_lakehouse._subject_filter(ids) ~ " order by subject_id") -%}
    {%- if held.rows | length > 0 -%}
        {%- do gdpr_lakehouse.print_table(held.rows | length ~ ' request(s) held, not erased:', ['request_id', 'subject_id', 'reason'], held.rows) -%}
    {%- endif -%}
    {%- if claimed.rows | length == 0 -%}
        {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- do print('gdpr_erase: no pending erasure request' ~ (' for the subjects given' if ids else '') ~ '; nothing to do.') -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set request_ids = claimed.columns['request_id'].values() | list -%}
    {#- the batch, and any other a crashed run of an older version left behind -#}
    {%- set batches = (claimed.columns['batch_id'].values() | list) + interrupted -%}
    {%- set batches = batches | unique | list -%}
    {%- set types = claimed.columns['subject_type'].values() | unique | list -%}
    {#- one request: each erasure commit's own metrics are that request's rows; more:
        the commits' Change Data Feed splits them per request -#}
    {%- do ctx.update({'request_ids': request_ids if request_ids | length <= 50 else none, 'batches': batches, 'types': types,
                       'single': request_ids | length == 1}) -%}

    {#- 3. tombstones first: nothing re-ingests these subjects from here on -#}
    {%- do run_query(gdpr_lakehouse._tombstone_sql(ctx)) -%}
    {%- do gdpr_lakehouse._crash_point('tombstone') -%}
    {#- the plan, savepoint copies included, read only now: a savepoint registered from
        here on re-erases its copy with these tombstones (it reads them after copying);
        one registered before is in the plan -#}
    {%- set plan = gdpr_lakehouse.erasure_plan() -%}
    {%- do print('gdpr_erase: batch ' ~ ctx.batch ~ ': ' ~ request_ids | length ~ ' request(s), '
        ~ plan | length ~ ' relation(s) in the plan' ~ ('; resuming the interrupted batch' if ctx.get('resumed') else '')) -%}
    {#- the batch, with each subject's pseudonym from its tombstone, computed once for
        every write and check below (_cache_batch) -#}
    {%- do ctx.update({'batch_cache': gdpr_lakehouse._cache_batch(ctx)}) -%}
    {#- a small batch reads only the files that can hold its subjects -#}
    {%- do ctx.update({'prune_prefixes': gdpr_lakehouse._pruning_prefixes(ctx)}) -%}
    {%- if ctx.prune_prefixes is not none -%}
        {%- do gdpr_lakehouse._pruning_session(true) -%}
    {%- endif -%}

    {#- 4. one batched write per relation, DAG order; 5. the vault last, then its purge.
        Every commit carries the tag: purpose erase, batch id, request ids. -#}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='erase', request_ids=ctx.request_ids, batch_id=ctx.batch)) -%}
    {%- set outcomes = [] -%}
    {%- for step in plan -%}
        {%- do outcomes.append(gdpr_lakehouse._erase_relation(step, ctx)) -%}
        {%- do gdpr_lakehouse._crash_point(step.relation_name) -%}
    {%- endfor -%}
    {#- 6. a write that read the tombstones before step 3 and committed after its
        relation was erased (ingestion, a rebuild) brings rows back: sweep -#}
    {%- set outcomes = gdpr_lakehouse._sweep(outcomes, ctx) -%}
    {%- if ctx.prune_prefixes is not none -%}
        {%- do gdpr_lakehouse._pruning_session(false) -%}
    {%- endif -%}
    {#- a subject erased before (its pseudonym now only a keyed hash in its tombstone)
        is found again only by hashing each row's key: a rollback made outside the
        engine may have brought them back, so every tombstone is re-applied to every
        relation of the plan (reapply_erasures) -#}
    {%- if gdpr_lakehouse.scalar_query("select count(*) from " ~ ctx.requests ~ " as earlier where earlier.status in "
          ~ gdpr_lakehouse.request_status_in('fulfilled') ~ " and earlier.subject_id in (select subject_id from ("
          ~ gdpr_lakehouse._batch_base(ctx) ~ ") as batch)", 0) | int > 0 -%}
        {%- do gdpr_lakehouse.reapply_erasures() -%}
        {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='erase', request_ids=ctx.request_ids, batch_id=ctx.batch)) -%}
    {%- endif -%}

    {#- 7. evidence per request and relation, recounted from the erasure commits; then
        requests whose every relation is done are erased -#}
    {%- do run_query(gdpr_lakehouse._evidence_sql(outcomes, ctx)) -%}
    {%- do gdpr_lakehouse._crash_point('evidence') -%}
    {%- do run_query(gdpr_lakehouse._complete_requests_sql(ctx)) -%}
    {%- do run_query(gdpr_lakehouse._unlink_erased_sql(ctx)) -%}
    {%- do gdpr_lakehouse._release_batch(ctx) -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- set seconds = (modules.datetime.datetime.utcnow() - started).total_seconds() -%}
    {%- set by_relation = {} -%}
    {%- for row in run_query(gdpr_lakehouse._evidence_summary_sql(ctx, request_ids)) -%}
        {%- do by_relation.update({row[0]: row}) -%}
    {%- endfor -%}
    {%- set lines = [] -%}
    {%- for outcome in outcomes if outcome.step.relation_name in by_relation -%}
        {%- do lines.append(by_relation[outcome.step.relation_name]) -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table('Erased ' ~ request_ids | length ~ ' request(s) in ' ~ '%.1f' | format(seconds) ~ ' s:',
        ['relation', 'action', 'version before -> after', 'rows', 'attempts'], lines) -%}
    {%- set done = run_query("select request_id, subject_id, status, cast(shredded_at as string) from " ~ ctx.requests
        ~ " where request_id in (" ~ gdpr_lakehouse._sql_list(request_ids[:20]) ~ ") order by subject_id") -%}
    {%- do gdpr_lakehouse.print_table('Requests' ~ (' (first 20)' if request_ids | length > 20 else '') ~ ':',
        ['request_id', 'subject_id', 'status', 'key shredded at'], done.rows) -%}
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
