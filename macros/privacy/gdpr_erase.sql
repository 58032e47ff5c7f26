{#
    dbt run-operation gdpr_erase                                   # every pending request
    dbt run-operation gdpr_erase --args '{subject_ids: ["P0000123"]}'   # these now (recorded as requests)
    dbt run-operation gdpr_erase --args '{dry_run: true}'          # rows per relation that would go

    The right to be forgotten, in order:
      1. legal holds: requests of subjects under hold become `held` and are left alone;
      2. claim the open requests (pending, failed, or erasing after a crash) as one batch;
      3. tombstone the subjects (keyed hash), so ingestion, rebuilds and snapshots can
         never bring them back (a write already under way is caught by step 6);
      4. per relation of the plan (erasure_plan: from the graph, DAG order), ONE batched
         MERGE against the whole batch: WHEN MATCHED THEN DELETE, or UPDATE ... SET
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

{% macro default__gdpr_erase(subject_ids, dry_run, reason, requested_by) -%}
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

    {%- set plan = gdpr_lakehouse.erasure_plan() -%}
    {%- set ctx = {
        'requests': gdpr_lakehouse._control_relation('privacy_erasure_requests'),
        'evidence': gdpr_lakehouse._control_relation('privacy_erasure_evidence'),
        'tombstones': gdpr_lakehouse._control_relation('privacy_erasure_tombstones'),
        'holds': gdpr_lakehouse._control_relation('privacy_legal_holds'),
        'vault': gdpr_lakehouse._control_relation('privacy_subject_keys'),
        'system_keys': gdpr_lakehouse._control_relation('privacy_system_keys'),
        'batch': invocation_id,
    } -%}
    {%- if dry_run -%}
        {{ return(gdpr_lakehouse._erasure_dry_run(plan, ctx, ids)) }}
    {%- endif -%}
    {%- if ids is not none -%}
        {%- do gdpr_lakehouse.default__request_erasure(ids, reason, requested_by) -%}
    {%- endif -%}
    {%- set started = modules.datetime.datetime.utcnow() -%}
    {#- a restore_version that died between its RESTORE and the re-erasure is healed first -#}
    {%- do gdpr_lakehouse.heal_interrupted_restores(gdpr_lakehouse._restore_context()) -%}

    {#- 1-2. legal holds, then claim the batch. A batch a crashed run left `erasing`
        (or a conflict left `failed`) is resumed under its own id: this run's commits
        carry it too, and new requests join it, so every commit of the batch, whichever
        run made it, is found by its tag and counted once. -#}
    {%- set interrupted = run_query("select distinct batch_id from " ~ ctx.requests
        ~ " where status in ('erasing', 'failed') and batch_id is not null order by batch_id").columns[0].values() | list -%}
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
    {%- do print('gdpr_erase: batch ' ~ ctx.batch ~ ': ' ~ request_ids | length ~ ' request(s), '
        ~ plan | length ~ ' relation(s) in the plan' ~ ('; resuming the interrupted batch' if ctx.get('resumed') else '')) -%}

    {#- 3. tombstones first: nothing re-ingests these subjects from here on -#}
    {%- do run_query(gdpr_lakehouse._tombstone_sql(ctx)) -%}
    {%- do gdpr_lakehouse._crash_point('tombstone') -%}

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

    {#- 7. evidence per request and relation, recounted from the erasure commits; then
        requests whose every relation is done are erased -#}
    {%- do run_query(gdpr_lakehouse._evidence_sql(outcomes, ctx)) -%}
    {%- do gdpr_lakehouse._crash_point('evidence') -%}
    {%- do run_query(gdpr_lakehouse._complete_requests_sql(ctx)) -%}
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
    evidence then counts every erasure commit of the batch). Returns the outcomes. -#}
{% macro _sweep(outcomes, ctx) -%}
    {%- set ns = namespace(swept=outcomes, done=false) -%}
    {%- for round in range(3) if not ns.done -%}
        {%- set checks = [] -%}
        {%- for outcome in ns.swept if outcome.step.action != 'shred' and outcome.status == 'erased' -%}
            {%- do checks.append("select " ~ ns.swept.index(outcome) ~ " as position, count(*) as left_rows from "
                ~ outcome.step.relation ~ " as target where target." ~ adapter.quote(outcome.step.key)
                ~ " in (select erase_key from (" ~ gdpr_lakehouse._batch_source(outcome.step, gdpr_lakehouse._batch_base(ctx))
                ~ ") as batch)") -%}
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

{% macro _subject_filter(ids, column='subject_id') -%}
    {%- if ids -%}{{ return(' and ' ~ column ~ ' in (' ~ gdpr_lakehouse._sql_list(ids) ~ ')') }}{%- endif -%}
    {{ return('') }}
{%- endmacro %}

{% macro _sql_list(values) -%}
    {%- set quoted = [] -%}
    {%- for value in values -%}{%- do quoted.append(gdpr_lakehouse._sql_string(value)) -%}{%- endfor -%}
    {{ return(quoted | join(', ')) }}
{%- endmacro %}

{#- An open request whose erasure has begun: a crashed or failed batch already wrote its
    tombstone (and maybe deleted rows or shredded the key, which cannot be undone). A
    legal hold placed after that cannot stop it: the batch is finished, and said so. -#}
{% macro _erasure_begun(ctx, alias='requests') -%}
    ({{ alias }}.status in ('erasing', 'failed') and exists (
        select 1 from {{ ctx.tombstones }} as begun
        where begun.subject_hash = {{ gdpr_lakehouse.tombstone_hash(alias ~ '.subject_id', keys=ctx.system_keys) }}
    ))
{%- endmacro %}

{#- Open requests of subjects under an active legal hold become held, with the reason;
    not those whose erasure has begun. -#}
{% macro _hold_requests_sql(ctx, ids) -%}
merge into {{ ctx.requests }} as requests
using (
    select
        requests.request_id,
        min(holds.reason) as hold_reason
    from {{ ctx.requests }} as requests
    inner join {{ ctx.holds }} as holds
        on requests.subject_id = holds.subject_id and holds.released_at is null
    where requests.status in ('pending', 'failed', 'erasing'){{ gdpr_lakehouse._subject_filter(ids, 'requests.subject_id') }}
        and not {{ gdpr_lakehouse._erasure_begun(ctx) }}
    group by requests.request_id
) as held
on requests.request_id = held.request_id
when matched then update set
    status = 'held',
    status_reason = concat('legal hold: ', held.hold_reason),
    updated_at = current_timestamp()
{%- endmacro %}

{#- Claim open requests (and held ones whose hold was released) for this batch, with
    the subject's type and pseudonym from the vault while the key still exists. -#}
{% macro _claim_requests_sql(ctx, ids) -%}
merge into {{ ctx.requests }} as requests
using (
    select
        requests.request_id,
        vault.subject_type,
        vault.subject_pseudonym
    from {{ ctx.requests }} as requests
    left join {{ ctx.vault }} as vault on requests.subject_id = vault.subject_id
    where requests.status in ('pending', 'failed', 'erasing', 'held'){{ gdpr_lakehouse._subject_filter(ids, 'requests.subject_id') }}
        and (not exists (
            select 1 from {{ ctx.holds }} as holds
            where holds.subject_id = requests.subject_id and holds.released_at is null
        ) or {{ gdpr_lakehouse._erasure_begun(ctx) }})
) as claim
on requests.request_id = claim.request_id
when matched then update set
    status = 'erasing',
    status_reason = null,
    batch_id = '{{ ctx.batch }}',
    subject_type = coalesce(requests.subject_type, claim.subject_type),
    subject_pseudonym = coalesce(requests.subject_pseudonym, claim.subject_pseudonym),
    updated_at = current_timestamp()
{%- endmacro %}

{% macro _tombstone_sql(ctx) -%}
merge into {{ ctx.tombstones }} as tombstones
using (
    select
        {{ gdpr_lakehouse.tombstone_hash('subject_id', keys=ctx.system_keys) }} as subject_hash,
        min(request_id) as request_id,
        min(subject_type) as subject_type,
        min(subject_pseudonym) as subject_pseudonym
    from {{ ctx.requests }}
    where status = 'erasing'
    group by subject_id
) as erased
on tombstones.subject_hash = erased.subject_hash
when matched and tombstones.pseudonym_hash is null and erased.subject_pseudonym is not null then update set
    pseudonym_hash = {{ gdpr_lakehouse.tombstone_hash('erased.subject_pseudonym', keys=ctx.system_keys) }},
    subject_type = erased.subject_type
when not matched then insert (subject_hash, request_id, erased_at, subject_type, subject_pseudonym, pseudonym_hash)
values (erased.subject_hash, erased.request_id, current_timestamp(), erased.subject_type, null,
        {{ gdpr_lakehouse.tombstone_hash('erased.subject_pseudonym', keys=ctx.system_keys) }})
{%- endmacro %}

{#- The batch as (request_id, erase_key) for one relation: the subject id or its
    pseudonym, only subjects of the relation's type (or of unknown type). -#}
{% macro _batch_source(step, base) -%}
select
    request_id,
    subject_pseudonym,
    {{ 'subject_pseudonym' if step.key_kind == 'pseudonym' else 'subject_id' }} as erase_key
from ({{ base }}) as batch
{%- if step.subject_type and step.action != 'shred' %}
where subject_type is null or subject_type = '{{ step.subject_type }}'
{%- endif %}
{%- endmacro %}

{#- The requests being erased: claimed by this run or left `erasing` by an interrupted one. -#}
{% macro _batch_base(ctx) -%}
select request_id, subject_id, subject_type, subject_pseudonym, batch_id
from {{ ctx.requests }}
where status = 'erasing'
{%- endmacro %}

{#- The batched write: one MERGE for the whole batch. -#}
{% macro _erase_sql(step, base) -%}
    {{ return(gdpr_lakehouse._erase_merge_sql(step, gdpr_lakehouse._batch_source(step, base))) }}
{%- endmacro %}

{#- Delete (or anonymize) in one relation the rows whose key is among the erase_key
    values of a query. The keys are broadcast to every task that scans the target: with
    Spark's size estimate alone (autoBroadcastJoinThreshold, 10 MB) a batch of a few
    hundred thousand keys or more is sort-merge joined, which shuffles the whole target
    and costs 4-5x the core-seconds (bench/run.py, "broadcast off"). Pass
    broadcast=false for a key query too large for the driver's memory. -#}
{% macro _erase_merge_sql(step, keys_sql, broadcast=true) -%}
    {%- set key = adapter.quote(step.key) -%}
merge into {{ step.relation }} as target
using (
    select {{ '/*+ BROADCAST */ ' if broadcast }}distinct erase_key from ({{ keys_sql }}) as batch
    where erase_key is not null
) as erase
on target.{{ key }} = erase.erase_key
{%- if step.action == 'anonymize' %}
when matched then update set
    {%- for column in [step.key] + step.pii_columns %}
    target.{{ adapter.quote(column) }} = null{{ ',' if not loop.last }}
    {%- endfor %}
{%- else %}
when matched then delete
{%- endif %}
{%- endmacro %}

{#- Erase the batch from one relation. Returns what happened, for the evidence:
    {step, status, attempts, versions (the erasure commits of the batch), version_before, version_after}. -#}
{% macro _erase_relation(step, ctx) -%}
    {%- set outcome = {'step': step, 'status': 'erased', 'attempts': 0, 'versions': [], 'version_before': none, 'version_after': none} -%}
    {%- if adapter.get_relation(database=none, schema=step.relation.schema, identifier=step.relation.identifier) is none -%}
        {%- do outcome.update({'status': 'absent'}) -%}
        {{ return(outcome) }}
    {%- endif -%}
    {#- no subject of the relation's type in the batch: nothing to write -#}
    {%- set applies = step.action == 'shred' or not step.subject_type or step.subject_type in ctx.types
        or (none in ctx.types and step.key_kind == 'id') -%}
    {%- if applies -%}
        {%- set result = gdpr_lakehouse.run_with_conflict_retry(gdpr_lakehouse._erase_sql(step, gdpr_lakehouse._batch_base(ctx))) -%}
        {%- do outcome.update({'attempts': result.attempts}) -%}
        {%- if result.attempts > 1 -%}
            {%- do log('gdpr_erase: ' ~ step.relation_name ~ ': ' ~ (result.attempts - 1) ~ ' concurrent-write conflict(s) retried', info=true) -%}
        {%- endif -%}
        {%- if not result.done -%}
            {%- do run_query(gdpr_lakehouse._fail_sql(step, ctx, result.attempts)) -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
            {%- do exceptions.raise_compiler_error("gdpr_erase: " ~ step.relation_name ~ ": every one of " ~ result.attempts
                ~ " attempts of the batched erasure lost a write conflict to a concurrent writer (Delta SQLSTATE 2D521); "
                ~ "the requests are marked failed and nothing is lost: run gdpr_erase again (it resumes), "
                ~ "or raise var erasure_max_attempts") -%}
        {%- endif -%}
    {%- endif -%}
    {%- if step.action == 'shred' -%}
        {%- do gdpr_lakehouse._crash_point('shred:deleted') -%}
        {#- the vault alone is purged at once: REORG, then VACUUM LITE (deletes only files
            the log removed, never a file a concurrent writer is still writing) at 0 hours -#}
        {%- do gdpr_lakehouse.purge_deletion_vectors(step.relation) -%}
        {%- do gdpr_lakehouse._crash_point('shred:reorg') -%}
        {%- do run_query('set spark.databricks.delta.retentionDurationCheck.enabled = false') -%}
        {%- do run_query('vacuum ' ~ step.relation ~ ' lite retain 0 hours') -%}
        {%- do run_query('set spark.databricks.delta.retentionDurationCheck.enabled = true') -%}
    {%- endif -%}
    {%- set history = run_query('describe history ' ~ step.relation ~ ' limit 100') -%}
    {%- for row in history
          if row['operation'] in ('MERGE', 'DELETE', 'UPDATE')
          and (fromjson(row['userMetadata'] or '{}') or {}).get('purpose') == 'erase'
          and (fromjson(row['userMetadata'] or '{}') or {}).get('batch_id') in ctx.batches -%}
        {%- do outcome.versions.append(row['version'] | int) -%}
    {%- endfor -%}
    {%- set ns = namespace(rows=0) -%}
    {%- for row in history if (row['version'] | int) in outcome.versions -%}
        {%- set metrics = row['operationMetrics'] | string -%}
        {%- for name in ['numTargetRowsDeleted', 'numTargetRowsUpdated', 'numDeletedRows', 'numUpdatedRows'] -%}
            {%- set ns.rows = ns.rows + (gdpr_lakehouse._history_metric(metrics, name) | int) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- do outcome.update({'metric_rows': ns.rows}) -%}
    {%- set latest = history.rows[0]['version'] | int -%}
    {%- do outcome.update({
        'version_before': (outcome.versions | min) - 1 if outcome.versions else latest,
        'version_after': outcome.versions | max if outcome.versions else latest,
    }) -%}
    {{ return(outcome) }}
{%- endmacro %}

{#- Evidence per request and relation, in one MERGE: rows each request lost, from the
    batch's erasure commits (found by their tag, so a rerun recounts them and never
    adds up twice): their operation metrics for a one-request batch, their Change Data
    Feed split per request otherwise; the vault (no change feed): 1 when the key existed. -#}
{% macro _evidence_sql(outcomes, ctx) -%}
merge into {{ ctx.evidence }} as evidence
using (
    {%- for outcome in outcomes %}
    {%- set step = outcome.step %}
    select
        batch.request_id,
        '{{ step.relation_name }}' as relation,
        '{{ step.node }}' as node,
        '{{ step.action }}' as action,
        cast({{ outcome.version_before if outcome.version_before is not none else 'null' }} as bigint) as version_before,
        cast({{ outcome.version_after if outcome.version_after is not none else 'null' }} as bigint) as version_after,
        {%- if step.action == 'shred' %}
        cast(max(case when batch.erase_key is not null and batch.subject_pseudonym is not null then 1 else 0 end) as bigint) as rows_affected,
        {%- elif outcome.versions and ctx.single %}
        cast({{ outcome.metric_rows }} as bigint) as rows_affected,
        {%- elif outcome.versions %}
        count(changes.erase_key) as rows_affected,
        {%- else %}
        cast(0 as bigint) as rows_affected,
        {%- endif %}
        {{ outcome.attempts }} as attempts,
        '{{ outcome.status }}' as status,
        {%- if outcome.status == 'absent' %}
        'relation not built: nothing to erase' as detail,
        {%- elif step.action == 'shred' %}
        'key deleted; vault purged at once (REORG, VACUUM LITE 0 h)' as detail,
        {%- else %}
        '{{ step.action }}d in commit(s) {{ outcome.versions | join(" ") or "none (no rows)" }}' as detail,
        {%- endif %}
        {{ 'current_timestamp()' if step.action == 'shred' else 'cast(null as timestamp)' }} as purged_at
    from ({{ gdpr_lakehouse._batch_source(step, gdpr_lakehouse._batch_base(ctx)) }}) as batch
    {%- if step.action != 'shred' and outcome.versions and not ctx.single %}
    left join (
        select {{ adapter.quote(step.key) }} as erase_key
        from table_changes('{{ step.relation_name }}', {{ outcome.versions | min }}, {{ outcome.versions | max }})
        where _change_type in ('delete', 'update_preimage')
            and _commit_version in ({{ outcome.versions | join(', ') }})
    ) as changes on changes.erase_key = batch.erase_key
    {%- endif %}
    group by batch.request_id
    {{- '
    union all' if not loop.last }}
    {%- endfor %}
) as outcome
on evidence.request_id = outcome.request_id and evidence.relation = outcome.relation and evidence.action != 'reapply'
when matched then update set
    version_before = outcome.version_before,
    version_after = outcome.version_after,
    rows_affected = outcome.rows_affected,
    attempts = outcome.attempts,
    status = outcome.status,
    erased_at = current_timestamp(),
    reorg_at = coalesce(evidence.reorg_at, outcome.purged_at),
    purged_at = coalesce(evidence.purged_at, outcome.purged_at),
    detail = outcome.detail
when not matched then insert (
    request_id, relation, node, action, version_before, version_after, rows_expected, rows_affected,
    attempts, status, started_at, erased_at, reorg_at, purged_at, detail
) values (
    outcome.request_id, outcome.relation, outcome.node, outcome.action, outcome.version_before,
    outcome.version_after, null, outcome.rows_affected, outcome.attempts, outcome.status,
    current_timestamp(), current_timestamp(), outcome.purged_at, outcome.purged_at, outcome.detail
)
{%- endmacro %}

{#- One line per relation for the printed summary. -#}
{% macro _evidence_summary_sql(ctx, request_ids) -%}
select
    relation,
    min(action),
    concat(cast(min(version_before) as string), ' -> ', cast(max(version_after) as string)),
    sum(rows_affected),
    max(attempts)
from {{ ctx.evidence }}
where request_id in ({{ gdpr_lakehouse._sql_list(request_ids) }}) and action != 'reapply'
group by relation
{%- endmacro %}

{% macro _fail_sql(step, ctx, attempts) -%}
merge into {{ ctx.requests }} as requests
using (select request_id from ({{ gdpr_lakehouse._batch_base(ctx) }}) as batch) as failed
on requests.request_id = failed.request_id
when matched then update set
    status = 'failed',
    status_reason = 'write conflicts on {{ step.relation_name }} after {{ attempts }} attempts; rerun gdpr_erase',
    updated_at = current_timestamp()
{%- endmacro %}

{#- Requests whose every relation is erased (or absent) become erased; the link
    between id and pseudonym is dropped (the tombstone keeps the pseudonym). -#}
{% macro _complete_requests_sql(ctx) -%}
merge into {{ ctx.requests }} as requests
using (
    select
        batch.request_id,
        max(case when evidence.action = 'shred' then evidence.purged_at end) as shredded_at
    from ({{ gdpr_lakehouse._batch_base(ctx) }}) as batch
    left join {{ ctx.evidence }} as evidence on batch.request_id = evidence.request_id
    group by batch.request_id
    having count_if(evidence.status not in ('erased', 'absent')) = 0 and count(evidence.request_id) > 0
) as done
on requests.request_id = done.request_id
when matched then update set
    status = 'erased',
    shredded_at = coalesce(requests.shredded_at, done.shredded_at),
    erased_at = current_timestamp(),
    subject_pseudonym = null,
    updated_at = current_timestamp()
{%- endmacro %}

{#- dry_run: rows per relation that would go; reads only. -#}
{% macro _erasure_dry_run(plan, ctx, ids) -%}
    {%- set alias = 'given' if ids else 'requests' -%}
    {%- set not_held -%}
not exists (
        select 1 from {{ ctx.holds }} as holds
        where holds.subject_id = {{ alias }}.subject_id and holds.released_at is null
    )
    {%- endset -%}
    {%- set base -%}
        {%- if ids -%}
select
    cast(null as string) as request_id,
    given.subject_id,
    vault.subject_type,
    vault.subject_pseudonym
from (select * from values {% for subject_id in ids %}({{ gdpr_lakehouse._sql_string(subject_id) }}){{ ', ' if not loop.last }}{% endfor %} as given (subject_id)) as given
left join {{ ctx.vault }} as vault on given.subject_id = vault.subject_id
where {{ not_held }}
        {%- else -%}
select
    requests.request_id,
    requests.subject_id,
    coalesce(requests.subject_type, vault.subject_type) as subject_type,
    coalesce(requests.subject_pseudonym, vault.subject_pseudonym) as subject_pseudonym
from {{ ctx.requests }} as requests
left join {{ ctx.vault }} as vault on requests.subject_id = vault.subject_id
where requests.status in ('pending', 'failed', 'erasing', 'held') and {{ not_held }}
        {%- endif -%}
    {%- endset -%}
    {%- set subjects = gdpr_lakehouse.scalar_query('select count(distinct subject_id) from (' ~ base ~ ') as batch', 0) -%}
    {%- set lines = [] -%}
    {%- set ns = namespace(total=0) -%}
    {%- for step in plan -%}
        {%- if adapter.get_relation(database=none, schema=step.relation.schema, identifier=step.relation.identifier) is none -%}
            {%- do lines.append([step.relation_name, step.action, 'not built']) -%}
        {%- else -%}
            {%- set query -%}
select count(*) from {{ step.relation }} as target
where target.{{ adapter.quote(step.key) }} in (
    select erase_key from ({{ gdpr_lakehouse._batch_source(step, base) }}) as batch
)
            {%- endset -%}
            {%- set rows = gdpr_lakehouse.scalar_query(query, 0) | int -%}
            {%- set ns.total = ns.total + rows -%}
            {%- do lines.append([step.relation_name, step.action, rows]) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table('Dry run: erasing ' ~ subjects ~ ' subject(s) would remove or anonymize ' ~ ns.total
        ~ ' row(s) (nothing was changed):', ['relation', 'action', 'rows'], lines) -%}
    {{ return(lines) }}
{%- endmacro %}
