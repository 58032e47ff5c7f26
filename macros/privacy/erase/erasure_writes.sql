{# gdpr_erase's writes: the tombstones first, then one batched MERGE per relation of the plan. #}

{#- The batch's tombstones, each with the subject's pseudonym read from the vault (the
    key still exists: this is the erasure's first write) and its hash. The tombstone
    keeps the pseudonym while the erasure runs (a resumed run reads it there:
    _batch_base) and drops it when the requests are erased (_unlink_erased_sql); the
    request log never holds it. It keeps it encrypted under the tombstone key: in
    clear, the tombstone's history (request_id, pseudonym) joined with the request
    log (request_id, subject id) would map the id to the subject's history until the
    purge; encrypted, only the tombstone key does (wrapped by the KEK under the
    envelope). -#}
{% macro _tombstone_sql(ctx) -%}
merge into {{ ctx.tombstones }} as tombstones
using (
    select
        subject_hash,
        request_id,
        subject_type,
        {{ gdpr_lakehouse.encrypt_pii('subject_pseudonym', gdpr_lakehouse.tombstone_key(ctx.system_keys), 'subject_hash', 'pseudonym_enc',
            key_binding=gdpr_lakehouse.key_binding(system_key='tombstone')) }} as pseudonym_enc,
        {{ gdpr_lakehouse.tombstone_hash('subject_pseudonym', keys=ctx.system_keys) }} as pseudonym_hash
    from (
        select
            {{ gdpr_lakehouse.tombstone_hash('requests.subject_id', keys=ctx.system_keys) }} as subject_hash,
            min(requests.request_id) as request_id,
            min(requests.subject_type) as subject_type,
            coalesce(min(requests.subject_pseudonym), min(vault.subject_pseudonym)) as subject_pseudonym
        from {{ ctx.requests }} as requests
        left join {{ ctx.vault }} as vault on requests.subject_id = vault.subject_id
        where requests.status = 'erasing'
        group by requests.subject_id
    ) as batch
) as erased
on tombstones.subject_hash = erased.subject_hash
when matched and tombstones.pseudonym_hash is null and erased.pseudonym_enc is not null then update set
    pseudonym_enc = erased.pseudonym_enc,
    pseudonym_hash = erased.pseudonym_hash,
    subject_type = erased.subject_type
when not matched then insert (subject_hash, request_id, erased_at, subject_type, pseudonym_enc, pseudonym_hash)
values (erased.subject_hash, erased.request_id, current_timestamp(), erased.subject_type, erased.pseudonym_enc,
        erased.pseudonym_hash)
{%- endmacro %}

{#- The batch, computed once: _batch_base joins the request log, the tombstones and
    the tombstone key (two scalar subqueries on privacy.system_keys, a decryption per
    subject), and every relation's MERGE, the sweep, the evidence and the completion
    read it. Computed again for each (~1.1 s a time on the demo, most of an
    empty-batch MERGE's 1.6 s, against 0.56 s from a cached batch), it was the largest
    share of a small erasure's cost. Cached after the tombstones exist (the pseudonyms
    are read from them from then on), in memory only (MEMORY_ONLY: a partition that
    does not fit is recomputed, never written to local disk), under a temporary view
    of this run's session whose plan carries the invocation id, so a later run in the
    same JVM (the warm engine, a test session) never matches a stale cache. Released
    when the run ends (_release_batch). Returns the view's name, or none where the
    engine cannot cache (a Databricks SQL warehouse: every reader computes the batch
    as before). A run an error stops leaves its batch cached in the session (dbt's
    Jinja has no `finally`); the next gdpr_erase of the session drops it first. A
    command's own JVM (the local target) ends with the command, and the Thrift server
    (the warm engine, a cluster) uncaches a session's temporary views when the session
    closes (SparkSQLSessionManager.closeSession). -#}
{% macro _cache_batch(ctx) -%}
    {{ return(adapter.dispatch('_cache_batch', 'gdpr_lakehouse')(ctx)) }}
{%- endmacro %}

{% macro spark___cache_batch(ctx) -%}
    {%- set run = invocation_id | string -%}
    {%- if not modules.re.match('^[0-9a-f-]{36}$', run) -%}
        {%- do exceptions.raise_compiler_error('gdpr_erase: invocation id ' ~ run[:40] ~ ' is not a UUID; the batch cannot be named') -%}
    {%- endif -%}
    {%- set name = 'gdpr_erase_batch_' ~ run | replace('-', '_') -%}
    {#- a run of this session an error stopped (dbt's Jinja cannot clean up after an
        error) left its batch cached: dropped first -#}
    {%- for row in run_query("show views like 'gdpr_erase_batch_*'")
          if row['isTemporary'] and modules.re.match('^gdpr_erase_batch_[0-9a-f_]{36}$', row['viewName'] | string) -%}
        {%- do gdpr_lakehouse._release_batch({'batch_cache': row['viewName'] | string}) -%}
    {%- endfor -%}
    {%- do run_query('cache table ' ~ name ~ " options ('storageLevel' 'MEMORY_ONLY') as select '" ~ run
        ~ "' as cached_by, request_id, subject_id, subject_type, subject_pseudonym, batch_id from ("
        ~ gdpr_lakehouse._batch_base(ctx) ~ ') as batch') -%}
    {{ return(name) }}
{%- endmacro %}

{% macro databricks___cache_batch(ctx) -%}
    {{ return(none) }}
{%- endmacro %}

{#- Drop the cached batch (its cache goes with the view), if there is one. -#}
{% macro _release_batch(ctx) -%}
    {%- if ctx.get('batch_cache') -%}
        {%- do run_query('uncache table if exists ' ~ ctx.batch_cache) -%}
        {%- do run_query('drop view if exists ' ~ ctx.batch_cache) -%}
        {%- do ctx.update({'batch_cache': none}) -%}
    {%- endif -%}
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

{#- The batched write for the whole batch. A relation keyed by pseudonym, when the
    batch has pseudonym prefixes (_pruning_prefixes) and its rows are deleted (not
    anonymized): one DELETE (_erase_delete_sql); any other, one MERGE with the prefixes
    when it has them. -#}
{% macro _erase_sql(step, base, prefixes=none) -%}
    {%- set keys_sql = gdpr_lakehouse._batch_source(step, base) -%}
    {%- if step.key_kind != 'pseudonym' -%}
        {{ return(gdpr_lakehouse._erase_merge_sql(step, keys_sql)) }}
    {%- elif prefixes is not none and step.action != 'anonymize' -%}
        {{ return(gdpr_lakehouse._erase_delete_sql(step, keys_sql, prefixes)) }}
    {%- endif -%}
    {{ return(gdpr_lakehouse._erase_merge_sql(step, keys_sql, prefixes=prefixes)) }}
{%- endmacro %}

{#- Delete from one relation keyed by pseudonym the rows of a pruned batch: the
    batch's keys into a local array variable, then one DELETE whose condition is that
    array and the batch's prefixes (_with_variable_sql). One subject on the
    200-patient demo, warm engine: ~0.6-0.9 s a relation that holds rows against
    ~1.3-2.0 s for the MERGE, the same rows deleted (docs/guides/erase.md). The keys never
    reach the SQL text, and the commit's operationParameters show the array as an
    object reference (UnsafeArrayData@...), not its values: only the prefixes, as for
    the MERGE (tests/functional/test_erasure.py checks the log names no pseudonym).
    The array is looked up only on the rows the prefixes' IN and startswith let
    through: Spark evaluates the conditions in the order written, and with the array
    first a 256-subject batch cost 2.2x the MERGE that reads every file, against 0.9x
    for the pruned MERGE (bench/pruning.py, 2M rows). A batch with more prefixes than
    var erasure_pruning_max_prefixes has none and is MERGEd. The key column is
    compared as a string: a pseudonym is lower-case hex. -#}
{% macro _erase_delete_sql(step, keys_sql, prefixes) -%}
    {%- set key = 'target.' ~ adapter.quote(step.key) -%}
    {%- set keys -%}
select collect_set(cast(erase_key as string)) from ({{ keys_sql }}) as batch where erase_key is not null
    {%- endset -%}
    {%- set delete -%}
delete from {{ step.relation }} as target
where true{{ gdpr_lakehouse._pruning_predicate(key, prefixes) }}
    and array_contains(gdpr_erase_batch.erase_keys, cast({{ key }} as string))
    {%- endset -%}
    {{ return(gdpr_lakehouse._with_variable_sql('gdpr_erase_batch', 'erase_keys', 'array<string>', keys, delete)) }}
{%- endmacro %}

{#- The batch's pseudonym prefixes (their first erasure_pruning_prefix_chars hex
    digits), for the file pruning of every relation keyed by pseudonym: a MERGE whose
    ON clause also says `startswith(target.key, '<prefix>') or ...` lets Delta skip,
    from the min/max statistics of its log, every file whose key range holds none of
    them (MergeIntoCommandBase.getTargetOnlyPredicates), so a small batch reads the
    files that can hold its subjects, not the whole relation (when the relation is
    clustered by its key: cluster_by_subject). The rows matched are the same: every
    row the MERGE erases has one of the prefixes. Only a prefix of a pseudonym reaches
    the SQL text and the Delta log's operationParameters, never an id: 16 bits of a
    SHA-256 by default, shared by ~1 in 65,536 subjects, and no more than the commit's
    own list of the files it rewrote tells. None (the MERGE reads every file, as
    before) when pruning is off, the batch has more distinct prefixes than var
    erasure_pruning_max_prefixes (bench/pruning.py chose 256: at 256 subjects a pruned
    MERGE cost 0.58x the one reading every file, at 1,000 it cost 1.56x), or a
    pseudonym is not lower-case hex (an adopter's own pseudonym macro). -#}
{% macro _pruning_prefixes(ctx) -%}
    {%- set settings = ctx.pruning -%}
    {%- if settings.max_prefixes == 0 -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set found = run_query("select distinct left(subject_pseudonym, " ~ settings.prefix_chars ~ ") from ("
        ~ gdpr_lakehouse._batch_base(ctx) ~ ") as batch where subject_pseudonym is not null order by 1 limit "
        ~ (settings.max_prefixes + 1)).columns[0].values() | map('string') | list -%}
    {%- if found | length > settings.max_prefixes -%}
        {%- do log('gdpr_erase: the batch has more than ' ~ settings.max_prefixes ~ ' pseudonym prefixes (var erasure_pruning_max_prefixes): every file of every relation is read', info=true) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- for prefix in found if not modules.re.match('^[0-9a-f]{' ~ settings.prefix_chars ~ '}$', prefix) -%}
        {%- do log('gdpr_erase: a pseudonym of the batch is not lower-case hex: no file pruning, every file of every relation is read', info=true) -%}
        {{ return(none) }}
    {%- endfor -%}
    {{ return(found) }}
{%- endmacro %}

{#- While a pruned batch's MERGEs run: Parquet's pushdown of string predicates off.
    Spark hands the OR of startswith to the Parquet reader, which tries every prefix
    on every dictionary value of every row group it reads: 100 prefixes on the 10M-row
    bench table cost 18-20 core-s to count the rows of the batch's files with it, 3.8-4.2
    without (bench/pruning.py's table, alternated). Delta has already skipped the files
    by the log. A Databricks SQL warehouse does not let a session set it: left alone
    there. Reset when the batch is written (_pruning_session(false)). -#}
{% macro _pruning_session(on) -%}
    {{ return(adapter.dispatch('_pruning_session', 'gdpr_lakehouse')(on)) }}
{%- endmacro %}

{% macro spark___pruning_session(on) -%}
    {%- if on -%}
        {%- do run_query('set spark.sql.parquet.filterPushdown.stringPredicate = false') -%}
    {%- else -%}
        {%- do run_query('reset spark.sql.parquet.filterPushdown.stringPredicate') -%}
    {%- endif -%}
{%- endmacro %}

{% macro databricks___pruning_session(on) -%}
{%- endmacro %}

{#- ` and left(<column>, 4) in ('ab12', ...) and (startswith(<column>, 'ab12') or ...)`,
    or nothing without prefixes. The OR of startswith is what Delta skips files with
    (the log's min/max statistics); it is also evaluated on every row of the files
    read, which costs one comparison per prefix per row (with Parquet's pushdown,
    _pruning_session: 100 prefixes cost 2.6x the MERGE that reads every file in
    bench/pruning.py before the two fixes). The IN before it is a hash lookup per
    row that is false for almost every row, so the OR runs only on the rows of the
    batch's prefixes. Each prefix is checked again here: lower-case hex only reaches
    the SQL. -#}
{% macro _pruning_predicate(column, prefixes) -%}
    {%- if prefixes is none -%}{{ return('') }}{%- endif -%}
    {%- if prefixes | length == 0 -%}{{ return(' and false') }}{%- endif -%}
    {%- set terms = [] -%}
    {%- set lengths = [] -%}
    {%- for prefix in prefixes -%}
        {%- if not modules.re.match('^[0-9a-f]{1,16}$', prefix | string) -%}
            {%- do exceptions.raise_compiler_error('gdpr_erase: pseudonym prefix ' ~ (prefix | string)[:20] ~ ' is not lower-case hex') -%}
        {%- endif -%}
        {%- do terms.append('startswith(' ~ column ~ ", '" ~ prefix ~ "')") -%}
        {%- do lengths.append(prefix | length) -%}
    {%- endfor -%}
    {%- if lengths | unique | list | length != 1 -%}
        {%- do exceptions.raise_compiler_error('gdpr_erase: the pseudonym prefixes are not all of one length') -%}
    {%- endif -%}
    {{ return(' and left(' ~ column ~ ', ' ~ lengths[0] ~ ") in ('" ~ prefixes | join("', '") ~ "') and (" ~ terms | join(' or ') ~ ')') }}
{%- endmacro %}

{#- Delete (or anonymize: the subject key and PII columns null, the record ids
    anonymized_record_id) in one relation the rows whose key is among the erase_key
    values of a query. The keys are broadcast to every task that scans the target: with
    Spark's size estimate alone (autoBroadcastJoinThreshold, 10 MB) a batch of a few
    hundred thousand keys or more is sort-merge joined, which shuffles the whole target
    and costs 4-5x the core-seconds (bench/run.py, "broadcast off"). Pass
    broadcast=false for a key query too large for the driver's memory. -#}
{% macro _erase_merge_sql(step, keys_sql, broadcast=true, prefixes=none) -%}
    {%- set key = adapter.quote(step.key) -%}
    {%- set record_ids = step.get('record_ids') or [] if step.action == 'anonymize' else [] -%}
merge into {{ step.relation }} as target
using (
    select {{ '/*+ BROADCAST */ ' if broadcast }}distinct erase_key{{ ', ' ~ gdpr_lakehouse.tombstone_key() ~ ' as record_salt' if record_ids }}
    from ({{ keys_sql }}) as batch
    where erase_key is not null
) as erase
on target.{{ key }} = erase.erase_key{{ gdpr_lakehouse._pruning_predicate('target.' ~ key, prefixes) }}
{%- if step.action == 'anonymize' %}
when matched then update set
    {%- for column in [step.key] + step.pii_columns %}
    target.{{ adapter.quote(column) }} = null{{ ',' if not (loop.last and not record_ids) }}
    {%- endfor %}
    {#- a source record id (an order id) is linked to the person by the source system -#}
    {%- for column in record_ids %}
    target.{{ adapter.quote(column) }} = {{ gdpr_lakehouse.anonymized_record_id('target.' ~ adapter.quote(column), salt_expr='erase.record_salt') }}{{ ',' if not loop.last }}
    {%- endfor %}
{%- else %}
when matched then delete
{%- endif %}
{%- endmacro %}

{#- Erase the batch from one relation. Returns what happened, for the evidence:
    {step, status, applies (false: no subject of the relation's type in the batch, so
    no key to erase and nothing written), attempts, versions (the erasure commits of
    the batch), version_before, version_after}. -#}
{% macro _erase_relation(step, ctx) -%}
    {%- set outcome = {'step': step, 'status': 'erased', 'attempts': 0, 'versions': [], 'version_before': none, 'version_after': none} -%}
    {%- if adapter.get_relation(database=none, schema=step.relation.schema, identifier=step.relation.identifier) is none -%}
        {%- do outcome.update({'status': 'absent'}) -%}
        {{ return(outcome) }}
    {%- endif -%}
    {#- no subject of the relation's type in the batch: nothing to write -#}
    {%- set applies = step.action == 'shred' or not step.subject_type or step.subject_type in ctx.types
        or (none in ctx.types and step.key_kind == 'id') -%}
    {%- do outcome.update({'applies': applies}) -%}
    {#- ...and no history to read (~0.1 s a relation): the erasure commits it would find
        count rows only for the batch's requests of the relation's type (_evidence_sql
        reads the batch through _batch_source), and the batch has none, so this
        relation gets no evidence row, nor a sweep (_sweep skips it). -#}
    {%- if not applies -%}
        {{ return(outcome) }}
    {%- endif -%}
    {%- set result = gdpr_lakehouse.run_with_conflict_retry(gdpr_lakehouse._erase_sql(step, gdpr_lakehouse._batch_base(ctx), ctx.get('prune_prefixes'))) -%}
    {%- do outcome.update({'attempts': result.attempts}) -%}
    {%- if result.attempts > 1 -%}
        {%- do log('gdpr_erase: ' ~ step.relation_name ~ ': ' ~ (result.attempts - 1) ~ ' concurrent-write conflict(s) retried', info=true) -%}
    {%- endif -%}
    {%- if not result.done -%}
        {%- do run_query(gdpr_lakehouse._fail_sql(step, ctx, result.attempts)) -%}
        {%- do gdpr_lakehouse._release_batch(ctx) -%}
        {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- do exceptions.raise_compiler_error("gdpr_erase: " ~ step.relation_name ~ ": every one of " ~ result.attempts
            ~ " attempts of the batched erasure lost a write conflict to a concurrent writer (Delta SQLSTATE 2D521); "
            ~ "the requests are marked failed and nothing is lost: run gdpr_erase again (it resumes), "
            ~ "or raise var erasure_max_attempts") -%}
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
