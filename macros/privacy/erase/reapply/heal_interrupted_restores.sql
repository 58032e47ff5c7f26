{#
    Re-apply every erasure to one relation: after a RESTORE (or any rewrite from an
    older state), the subjects erased since come back with the old files; one MERGE
    deletes (or anonymizes) them again, keyed by every tombstone: the pseudonym it
    keeps, or for relations keyed by the source id, the ids of the requests whose
    keyed hash is tombstoned. Recorded as `reapply` evidence of each affected request
    (rows from the commit's Change Data Feed) and in privacy.restore_log.
#}

{#- The erased subjects as (erase_key, request_id), in the key the relation uses: every
    distinct key of `keys_sql` (default: the relation itself) whose hash under the
    tombstone key is tombstoned (subject_hash for source ids, pseudonym_hash for
    pseudonyms). Nothing that maps an id to its pseudonym is kept to do this. -#}
{% macro _erased_keys_sql(step, ctx, keys_sql=none) -%}
select present.erase_key, min(tombstones.request_id) as request_id
from (
    {#- hashed here, in a projection: macro tombstone_hash -#}
    select erase_key, {{ gdpr_lakehouse.tombstone_hash('erase_key', keys=ctx.system_keys) }} as erase_hash
    from (
        {%- if keys_sql %}
        {{ keys_sql }}
        {%- else %}
        select distinct {{ adapter.quote(step.key) }} as erase_key from {{ step.relation }}
        where {{ adapter.quote(step.key) }} is not null
        {%- endif %}
    ) as keys
) as present
inner join {{ ctx.tombstones }} as tombstones
    on tombstones.{{ 'pseudonym_hash' if step.key_kind == 'pseudonym' else 'subject_hash' }} = present.erase_hash
group by present.erase_key
{%- endmacro %}

{#- The erasure plan's steps by node id. -#}
{% macro _erasure_steps_by_node() -%}
    {%- set steps = {} -%}
    {%- for step in gdpr_lakehouse.erasure_plan(savepoints=false) if step.action != 'shred' -%}
        {%- do steps.update({step.node: step}) -%}
    {%- endfor -%}
    {{ return(steps) }}
{%- endmacro %}

{#- The plan's step of the item's node, writing to the item's relation: the node's own
    relation, or a savepoint's copy of it. -#}
{% macro _item_step(item, steps=none) -%}
    {%- set steps = steps if steps is not none else gdpr_lakehouse._erasure_steps_by_node() -%}
    {%- set step = steps.get(item.node.unique_id) if item.node else none -%}
    {%- if step and item.relation.identifier | lower != step.relation.identifier | lower -%}
        {%- set step = dict(step) -%}
        {%- do step.update({'relation': item.relation, 'relation_name': item.relation.schema ~ '.' ~ item.relation.identifier}) -%}
    {%- endif -%}
    {{ return(step) }}
{%- endmacro %}

{#- Re-erase one relation right after its RESTORE, or a savepoint's copy right after
    it was made (item: {restore_id, node, relation}): one MERGE against every erased
    subject, tagged with the restore id. -#}
{% macro _reapply_write(ctx, item) -%}
    {%- set step = gdpr_lakehouse._item_step(item) -%}
    {%- if step -%}
        {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='reapply_erasure', extra={'restore_id': item.restore_id})) -%}
        {%- set result = gdpr_lakehouse.run_with_conflict_retry(gdpr_lakehouse._erase_merge_sql(step, gdpr_lakehouse._erased_keys_sql(step, ctx))) -%}
        {%- if not result.done -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
            {%- do exceptions.raise_compiler_error("restore_version: " ~ step.relation_name ~ ": every one of " ~ result.attempts
                ~ " attempts to re-apply the erasures lost a write conflict (Delta SQLSTATE 2D521); the restore log keeps it "
                ~ "`restoring` and the next restore_version or gdpr_erase re-applies them") -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- After the writes: find each item's RESTORE and re-erasure commits by their tag,
    write the `reapply` evidence (one MERGE for all), reopen purged requests, settle
    the restore log (one MERGE). Returns the items with {restore_commit,
    reapply_commit, rows_restored, rows_reerased, status, detail}. -#}
{% macro _settle_restores(ctx, items) -%}
    {%- set steps = gdpr_lakehouse._erasure_steps_by_node() -%}
    {%- for item in items -%}
        {%- set ns = namespace(restore=none, reapply=none) -%}
        {%- for commit in gdpr_lakehouse.delta_history(item.relation, 1000) if commit.tag.get('restore_id') == item.restore_id -%}
            {#- RESTORE; a savepoint's copy (CREATE TABLE AS SELECT) or a restore from one
                (an overwrite, WRITE) -#}
            {%- if commit.tag.get('purpose') == 'restore' and ns.restore is none
                  and commit.operation in ('RESTORE', 'WRITE', 'CREATE TABLE AS SELECT', 'CREATE OR REPLACE TABLE AS SELECT', 'REPLACE TABLE AS SELECT') -%}
                {%- set ns.restore = commit -%}
            {%- endif -%}
            {%- if commit.tag.get('purpose') == 'reapply_erasure' and commit.operation in ('MERGE', 'DELETE', 'UPDATE') and ns.reapply is none -%}
                {%- set ns.reapply = commit -%}
            {%- endif -%}
        {%- endfor -%}
        {%- set step = gdpr_lakehouse._item_step(item, steps) -%}
        {%- set rows_reerased = (ns.reapply.metrics.get('numTargetRowsDeleted', 0) + ns.reapply.metrics.get('numTargetRowsUpdated', 0)) if ns.reapply else 0 -%}
        {%- set detail -%}
            {%- if ns.restore is none -%}the RESTORE never committed: nothing was restored
            {%- elif ns.reapply -%}RESTORE in commit {{ ns.restore.version }} brought back {{ rows_reerased }} row(s) of erased subjects; {{ step.action }}d again in commit {{ ns.reapply.version }}
            {%- elif step -%}RESTORE in commit {{ ns.restore.version }}; no erased subject in the restored data
            {%- else -%}RESTORE in commit {{ ns.restore.version }}; the relation holds no subject key (nothing to re-erase)
            {%- endif -%}
        {%- endset -%}
        {%- do item.update({
            'step': step,
            'relation_name': item.relation.schema ~ '.' ~ item.relation.identifier,
            'restore_commit': ns.restore.version if ns.restore else none,
            'reapply_commit': ns.reapply.version if ns.reapply else none,
            'rows_restored': gdpr_lakehouse.scalar_query('select count(*) from ' ~ item.relation ~ ' version as of ' ~ ns.restore.version, 0) if ns.restore else none,
            'rows_reerased': rows_reerased,
            'status': 'reapplied' if ns.restore else 'failed',
            'detail': detail | trim,
        }) -%}
    {%- endfor -%}
    {#- the settling writes (evidence, requests, restore log) say which restores they settle
        (the first five: a tag value holds 200 characters) -#}
    {%- set restore_ids = items | map(attribute='restore_id') | unique | list -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='restore', extra={'restore_id': restore_ids[:5] | join(' ')})) -%}
    {%- set reapplied = items | selectattr('reapply_commit', 'ne', none) | list -%}
    {%- if reapplied -%}
        {%- do run_query(gdpr_lakehouse._reapply_evidence_sql(ctx, reapplied)) -%}
        {%- if gdpr_lakehouse.scalar_query("select count(*) from " ~ ctx.requests ~ " where status = 'purged'", 0) | int > 0 -%}
            {%- do run_query(gdpr_lakehouse._reopen_purged_sql(ctx, reapplied)) -%}
        {%- endif -%}
    {%- endif -%}
    {%- do run_query(gdpr_lakehouse._restore_log_finish_sql(ctx, items)) -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {{ return(items) }}
{%- endmacro %}

{#- One `reapply` evidence row per request and relation that lost rows in a
    re-erasure commit (counted from that commit's Change Data Feed). -#}
{% macro _reapply_evidence_sql(ctx, items) -%}
merge into {{ ctx.evidence }} as evidence
using (
    {%- for item in items %}
    {%- set step = item.step %}
    select
        erased.request_id,
        '{{ step.relation_name }}' as relation,
        '{{ step.node }}' as node,
        cast({{ item.restore_commit if item.restore_commit is not none else 'null' }} as bigint) as version_before,
        cast({{ item.reapply_commit }} as bigint) as version_after,
        count(*) as rows_affected,
        concat('restore {{ item.restore_id }} brought back ', cast(count(*) as string),
               ' row(s); {{ step.action }}d again in commit {{ item.reapply_commit }}') as detail
    from ({{ gdpr_lakehouse._erased_in_commits_sql(step, [item.reapply_commit]) }}) as changes
    inner join ({{ gdpr_lakehouse._erased_keys_sql(step, ctx, "select distinct erase_key from ("
        ~ gdpr_lakehouse._erased_in_commits_sql(step, [item.reapply_commit]) ~ ") as changed") }}) as erased on changes.erase_key = erased.erase_key
    group by erased.request_id
    {{- '
    union all' if not loop.last }}
    {%- endfor %}
) as outcome
on evidence.request_id = outcome.request_id and evidence.relation = outcome.relation
    and evidence.action = 'reapply' and evidence.version_after = outcome.version_after
when not matched then insert (
    {{ gdpr_lakehouse._evidence_columns() }}
) values (
    outcome.request_id, outcome.relation, outcome.node, 'reapply', outcome.version_before, outcome.version_after,
    null, outcome.rows_affected, 1, 'erased', current_timestamp(), current_timestamp(), null, null, outcome.detail
)
{%- endmacro %}

{#- A purged request whose rows a restore brought back is no longer purged: the
    restored files hold it again until the purge job runs. -#}
{% macro _reopen_purged_sql(ctx, items) -%}
merge into {{ ctx.requests }} as requests
using (
    select distinct request_id from {{ ctx.evidence }}
    where action = 'reapply' and ({% for item in items %}(relation = '{{ item.relation_name }}' and version_after = {{ item.reapply_commit }}){{ ' or ' if not loop.last }}{% endfor %})
) as reopened
on requests.request_id = reopened.request_id and requests.status = 'purged'
when matched then update set
    status = 'erased',
    purged_at = null,
    status_reason = 'a restore brought rows back and they were erased again; purge again',
    updated_at = current_timestamp()
{%- endmacro %}

{% macro _restore_log_finish_sql(ctx, items) -%}
merge into {{ ctx.restore_log }} as log
using (
    select * from values
    {%- for item in items %}
        ('{{ item.restore_id }}', '{{ item.relation_name }}', cast({{ item.restore_commit if item.restore_commit is not none else 'null' }} as bigint),
         cast({{ item.reapply_commit if item.reapply_commit is not none else 'null' }} as bigint),
         cast({{ item.rows_restored if item.rows_restored is not none else 'null' }} as bigint), cast({{ item.rows_reerased | int }} as bigint),
         '{{ item.status }}', {{ gdpr_lakehouse._sql_string(item.detail) }}){{ ',' if not loop.last }}
    {%- endfor %}
    as settled (restore_id, relation, restore_commit_version, reapply_commit_version, rows_restored, rows_reerased, status, detail)
) as settled
on log.restore_id = settled.restore_id and log.relation = settled.relation
when matched then update set
    restore_commit_version = settled.restore_commit_version,
    reapply_commit_version = settled.reapply_commit_version,
    rows_restored = settled.rows_restored,
    rows_reerased = settled.rows_reerased,
    status = settled.status,
    finished_at = current_timestamp(),
    detail = settled.detail
{%- endmacro %}

{#- Heal: a restore_version run that died between its RESTORE and the re-erasure left
    its restore log row `restoring` (a savepoint that died after its copy, likewise);
    re-apply the erasures to that relation now, then settle the savepoints left
    `creating`. Called first by restore_version, savepoint, release_savepoint and
    gdpr_erase. Returns the rows healed. -#}
{% macro heal_interrupted_restores(ctx) -%}
    {{ return(adapter.dispatch('heal_interrupted_restores', 'gdpr_lakehouse')(ctx)) }}
{%- endmacro %}

{% macro spark__heal_interrupted_restores(ctx) -%}
    {%- do gdpr_lakehouse.unlink_tombstones(ctx.tombstones, ctx.system_keys) -%}
    {%- set pending = run_query("select restore_id, relation, node, target_version from " ~ ctx.restore_log ~ " where status = 'restoring' order by started_at") -%}
    {%- set items = [] -%}
    {%- for row in pending -%}
        {#- read back from a table anyone with write access could have changed: checked
            before any of it reaches SQL -#}
        {%- if not modules.re.match(gdpr_lakehouse.request_id_pattern('restore'), row[0] | string)
              or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}[.][A-Za-z_][A-Za-z0-9_]{0,127}$', row[1] | string) -%}
            {%- do exceptions.raise_compiler_error(ctx.restore_log ~ " holds an unsettled restore that restore_version did not write (restore_id "
                ~ (row[0] | string)[:40] ~ ", relation " ~ (row[1] | string)[:80] ~ "); nothing was run. Fix or remove that row by hand") -%}
        {%- endif -%}
        {%- set parts = row[1].split('.') -%}
        {#- asked of the catalog: a savepoint's copy is in no schema dbt caches -#}
        {%- set relation = api.Relation.create(schema=parts[0], identifier=parts[1], type='table')
            if gdpr_lakehouse._table_exists(parts[0], parts[1]) else none -%}
        {%- if relation is none -%}
            {%- set relation = api.Relation.create(schema=parts[0], identifier=parts[1], type='table') -%}
            {%- do run_query(gdpr_lakehouse._restore_log_finish_sql(ctx, [{'restore_id': row[0], 'relation_name': row[1], 'restore_commit': none,
                'reapply_commit': none, 'rows_restored': none, 'rows_reerased': 0, 'status': 'failed', 'detail': 'the relation no longer exists'}])) -%}
        {%- else -%}
            {%- do log('healing interrupted restore ' ~ row[0] ~ ' of ' ~ row[1] ~ ': re-applying every erasure', info=true) -%}
            {%- set node = graph.nodes.get(row[2]) -%}
            {%- set item = {'restore_id': row[0], 'node': node, 'relation': relation} -%}
            {%- do gdpr_lakehouse._reapply_write(ctx, item) -%}
            {#- a CDC bronze table's own restore (not a savepoint's copy of it): the files
                applied after the version it went back to are read again, as restore_version
                does once it re-erased -#}
            {%- if node and row[3] is not none and row[1] | lower == (node.schema ~ '.' ~ node.alias) | lower -%}
                {%- do gdpr_lakehouse.forget_landing_files(node, row[3] | int) -%}
            {%- endif -%}
            {%- do items.append(item) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if items -%}
        {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- for item in gdpr_lakehouse._settle_restores(ctx, items) -%}
            {%- do print('healed interrupted restore ' ~ item.restore_id ~ ' of ' ~ item.relation_name ~ ': ' ~ item.detail) -%}
        {%- endfor -%}
        {%- do gdpr_lakehouse._sweep_erased(ctx, items[0].restore_id) -%}
    {%- endif -%}
    {%- do gdpr_lakehouse._settle_savepoints(ctx) -%}
    {{ return(items | length) }}
{%- endmacro %}

{#- Savepoints left `creating` (privacy.savepoints; macro savepoint, privacy/restore):
    kept once their copy's restore log entry is settled (the heal re-applied the
    erasures), failed when the copy never committed. Called at the end of every heal.
    Nothing to do before the registry is built. -#}
{% macro _settle_savepoints(ctx) -%}
    {%- set registry = ctx.get('savepoints') -%}
    {%- if registry is none -%}
        {%- set node = gdpr_lakehouse.engine_node('privacy_savepoints') -%}
        {%- set registry = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) if node else none -%}
    {%- endif -%}
    {%- if registry is none -%}{{ return(none) }}{%- endif -%}
    {%- set ctx = dict(ctx, savepoints=registry) -%}
    {%- set creating = run_query("select savepoint_name, node, savepoint_relation, restore_id from " ~ ctx.savepoints ~ " where status = 'creating'") -%}
    {%- for row in creating -%}
        {%- if not modules.re.match('^[a-z][a-z0-9_]{0,63}$', (row[0] or '') | string)
              or not modules.re.match('^[A-Za-z0-9_]+([.][A-Za-z0-9_]+){2,3}$', (row[1] or '') | string)
              or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}[.][A-Za-z_][A-Za-z0-9_]{0,127}$', (row[2] or '') | string)
              or not modules.re.match(gdpr_lakehouse.request_id_pattern('restore'), (row[3] or '') | string) -%}
            {%- do exceptions.raise_compiler_error(ctx.savepoints ~ " holds an unsettled savepoint that savepoint did not write (name "
                ~ ((row[0] or '') | string | tojson)[:40] ~ "); nothing was run. Fix or remove that row by hand") -%}
        {%- endif -%}
        {%- set parts = row[2].split('.') -%}
        {%- set copied = gdpr_lakehouse._table_exists(parts[0], parts[1]) -%}
        {%- set logged = gdpr_lakehouse.scalar_query("select max(status) from " ~ ctx.restore_log ~ " where restore_id = '" ~ row[3]
            ~ "' and relation = '" ~ row[2] ~ "'", none) -%}
        {%- set status = 'kept' if copied and logged == 'reapplied' else ('failed' if not copied and logged != 'restoring' else none) -%}
        {%- if status -%}
            {%- do run_query("update " ~ ctx.savepoints ~ " set status = '" ~ status ~ "' where savepoint_name = '" ~ row[0]
                ~ "' and node = '" ~ row[1] ~ "' and restore_id = '" ~ row[3] ~ "' and status = 'creating'") -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}

{#- After a heal: whatever ran while the restore was unsettled (a snapshot, a build) may
    have copied the resurrected subjects elsewhere. One query counts erased subjects'
    rows in every relation of the plan; where there are any, they are erased again
    (tagged reapply_erasure with the restore id). -#}
{% macro _sweep_erased(ctx, restore_id) -%}
    {%- set steps = [] -%}
    {%- for step in gdpr_lakehouse._erasure_steps_by_node().values()
          if adapter.get_relation(database=none, schema=step.relation.schema, identifier=step.relation.identifier) is not none -%}
        {%- do steps.append(step) -%}
    {%- endfor -%}
    {%- set checks = [] -%}
    {%- for step in steps -%}
        {%- do checks.append("select " ~ loop.index0 ~ " as position, count(*) as left_rows from " ~ step.relation
            ~ " as target where target." ~ adapter.quote(step.key) ~ " in (select erase_key from ("
            ~ gdpr_lakehouse._erased_keys_sql(step, ctx) ~ ") as erased)") -%}
    {%- endfor -%}
    {%- for row in (run_query(checks | join('\nunion all\n')) if checks else []) if row[1] | int > 0 -%}
        {%- set step = steps[row[0] | int] -%}
        {%- do log('healing: ' ~ step.relation_name ~ ' held ' ~ row[1] ~ ' row(s) of erased subjects copied while restore '
            ~ restore_id ~ ' was unsettled; erased again', info=true) -%}
        {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='reapply_erasure', extra={'restore_id': restore_id})) -%}
        {%- set result = gdpr_lakehouse.run_with_conflict_retry(gdpr_lakehouse._erase_merge_sql(step, gdpr_lakehouse._erased_keys_sql(step, ctx))) -%}
        {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- if not result.done -%}
            {%- do exceptions.raise_compiler_error("healing restore " ~ restore_id ~ ": " ~ step.relation_name
                ~ ": every attempt to erase the copied rows lost a write conflict; run the command again") -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}

{#- The control relations a re-erasure reads and writes: gdpr_erase, restore_version
    and the on-run-start heal alike. -#}
{% macro _restore_context() -%}
    {{ return({
        'restore_log': gdpr_lakehouse._control_relation('privacy_restore_log'),
        'requests': gdpr_lakehouse._control_relation('privacy_erasure_requests'),
        'evidence': gdpr_lakehouse._control_relation('privacy_erasure_evidence'),
        'tombstones': gdpr_lakehouse._control_relation('privacy_erasure_tombstones'),
        'vault': gdpr_lakehouse._control_relation('privacy_subject_keys'),
        'system_keys': gdpr_lakehouse._control_relation('privacy_system_keys'),
    }) }}
{%- endmacro %}
