{#
    dbt run-operation restore_version --args '{model: silver_patients, version: 10}'
    dbt run-operation restore_version --args '{model: bronze_patients, timestamp: "2026-11-21 10:00:00", cascade: true}'
    dbt run-operation restore_version --args '{model: silver_patients, version: 10, dry_run: true}'
    dbt run-operation restore_version --args '{model: silver_patients, savepoint: month_end_2026_01}'

    Rollback that never resurrects an erased person:
      1. validate everything before any write: the model is a Delta model or snapshot
         of this project that declares meta.privacy (not the key vault, not a privacy
         control table), the version is in its history (or the timestamp, in UTC, is
         not in the future and not before the first commit) and its files were not
         vacuumed (else the error names the oldest restorable version);
      2. record the restore in privacy.restore_log (status restoring);
      3. RESTORE TABLE ... TO VERSION AS OF <v>, the commit tagged with who and why;
      4. re-apply every erasure (every tombstoned subject) to the restored relation in
         one MERGE, recorded as `reapply` evidence of each affected request; the
         restore log becomes `reapplied`.
    A run that dies between 3 and 4 leaves the log row `restoring`; the next
    restore_version or gdpr_erase finds it and re-applies the erasures (heals).
    cascade: true restores the downstream relations that hold subjects' data to the
    same point in time, parents first, and names those it leaves and why.
    dry_run: true prints, per relation, rows now and at the target, rows the restore
    would bring back and remove, rows of erased subjects it would erase again; it
    changes nothing.
    savepoint: name restores the model from a savepoint's copy (macro savepoint), even
    once VACUUM has deleted the version's own files: the relation is overwritten with
    the copy (one commit; Delta's RESTORE reads only the relation's own log), the
    erasures are re-applied as after a RESTORE, a CDC bronze table's landing files
    applied after the version are read again. The copy must have the relation's
    columns. Not with version, timestamp or cascade.
    Each step is a macro of its own in steps/.
#}
{% macro restore_version(model=none, version=none, timestamp=none, dry_run=false, cascade=false, reason=none, savepoint=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('restore_version', kwargs, ['model', 'version', 'timestamp', 'dry_run', 'cascade', 'reason', 'savepoint']) -%}
    {{ return(adapter.dispatch('restore_version', 'gdpr_lakehouse')(model, version, timestamp, dry_run, cascade, reason, savepoint)) }}
{%- endmacro %}

{% macro spark__restore_version(model, version, timestamp, dry_run, cascade, reason, savepoint=none) -%}
    {#- 1. arguments first: a bad one changes nothing and runs no statement -#}
    {%- set dry_run = gdpr_lakehouse._validate_flag(dry_run, 'dry_run') -%}
    {%- set given = gdpr_lakehouse._restore_arguments(version, timestamp, cascade, reason, savepoint, model) -%}
    {%- set node = gdpr_lakehouse._restorable_node(model, 'restore_version') -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- do gdpr_lakehouse.assert_key_envelope() -%}
    {%- set ctx = gdpr_lakehouse._restore_context() -%}
    {%- if not dry_run -%}
        {%- do gdpr_lakehouse.heal_interrupted_restores(ctx) -%}
    {%- endif -%}
    {%- set started = modules.datetime.datetime.utcnow() -%}
    {%- set left = [] -%}
    {%- set targets = gdpr_lakehouse._restore_targets(node, given, dry_run, left) -%}
    {%- if dry_run -%}
        {{ return(gdpr_lakehouse._restore_dry_run(targets, left, ctx)) }}
    {%- endif -%}
    {%- set todo = targets | selectattr('changes') | list -%}
    {%- if not todo -%}
        {%- do print('restore_version: ' ~ targets[0].relation_name ~ ' is already at version ' ~ targets[0].latest
            ~ ' (the version asked for resolves to it); nothing restored.') -%}
        {%- do gdpr_lakehouse._print_left(left) -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set restore_id = gdpr_lakehouse.request_id('restore', run_started_at, invocation_id) -%}
    {%- set items = gdpr_lakehouse._restore_apply(ctx, todo, restore_id, given.reason) -%}
    {%- do gdpr_lakehouse._print_restore(ctx, items, restore_id, given.reason, started, left) -%}
    {{ return(restore_id) }}
{%- endmacro %}

{#- The model or snapshot named `model`, if restore_version, savepoint and as_of may
    take it: a Delta table of this project that declares meta.privacy (they must know
    how to re-apply erasures), not the key vault, the system keys or a control table. -#}
{% macro _restorable_node(model, operation) -%}
    {%- set node = gdpr_lakehouse._delta_node(model, operation) -%}
    {%- set privacy = (node.config.meta or {}).get('privacy') -%}
    {%- if not privacy -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ model ~ " declares no meta.privacy; " ~ operation ~ " takes only relations "
            ~ "whose privacy is declared (it must know how to re-apply erasures); declare it in the model's yml first") -%}
    {%- endif -%}
    {%- if privacy.get('role') in ('vault', 'control', 'system') -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ model ~ " is " ~ ("the key vault: an old copy of it would revive shredded keys or destroy keys created since"
            if privacy.role == 'vault' else "the system key table: an old copy of it would hold keys since replaced" if privacy.role == 'system'
            else "a privacy control table (requests, evidence, tombstones, holds, restore log, savepoints): it is the record of erasure and is never rolled back")) -%}
    {%- endif -%}
    {{ return(node) }}
{%- endmacro %}

{#- A timestamp argument: ISO date or date-time (UTC unless an offset is given). -#}
{% macro _validate_timestamp_text(value) -%}
    {%- set pattern = '^[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?)?(Z|[+-][0-9]{2}:[0-9]{2})?$' -%}
    {%- if value is not string or not modules.re.match(pattern, value) -%}
        {%- do exceptions.raise_compiler_error("restore_version: timestamp " ~ (value | tojson)[:60] ~ " is not a timestamp; "
            ~ "give \"YYYY-MM-DD HH:MM:SS\" (UTC; a date, fractions of a second or an offset like +01:00 are fine)") -%}
    {%- endif -%}
    {#- a day the calendar has and a time of day, checked before any statement runs -#}
    {%- set parts = modules.re.match('^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[ T]([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?)?', value) -%}
    {%- set year = parts.group(1) | int -%}
    {%- set month = parts.group(2) | int -%}
    {%- if month < 1 or month > 12 or (parts.group(3) | int) < 1 or (parts.group(3) | int) > gdpr_lakehouse._days_in_month(year, month)
          or ((parts.group(4) or '0') | int) > 23 or ((parts.group(5) or '0') | int) > 59 or ((parts.group(6) or '0') | int) > 59 -%}
        {%- do exceptions.raise_compiler_error("restore_version: timestamp \"" ~ value ~ "\" is not a valid date and time") -%}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}

{#- Resolve what to restore one relation to: {node, relation, relation_name, version,
    timestamp_text, latest, changes, point_in_time (the time the restored state held
    until: the next data-changing commit, minus 1 ms), history}. Raises when the
    version or timestamp cannot be restored. -#}
{% macro _restore_target(node, version, timestamp) -%}
    {%- set relation = gdpr_lakehouse._delta_relation_of(node, 'restore_version') -%}
    {%- set name = node.schema ~ '.' ~ node.alias -%}
    {%- set history = gdpr_lakehouse.delta_history(relation) -%}
    {%- set latest = history[0].version -%}
    {%- set first = history[-1] -%}
    {%- if timestamp is not none -%}
        {%- set probe = run_query("select try_to_timestamp('" ~ timestamp ~ "') as asked, current_timestamp() as now") -%}
        {%- set asked = probe.rows[0][0] -%}
        {%- if asked is none -%}
            {%- do exceptions.raise_compiler_error("restore_version: timestamp \"" ~ timestamp ~ "\" is not a valid date and time") -%}
        {%- endif -%}
        {%- if asked > probe.rows[0][1] -%}
            {%- do exceptions.raise_compiler_error("restore_version: timestamp " ~ timestamp ~ " is in the future (now: " ~ gdpr_lakehouse._utc_text(probe.rows[0][1])
                ~ " UTC); give a time between " ~ first.timestamp_text ~ " and now") -%}
        {%- endif -%}
        {%- set candidates = history | selectattr('timestamp', 'le', asked) | list -%}
        {%- if not candidates -%}
            {%- do exceptions.raise_compiler_error("restore_version: timestamp " ~ timestamp ~ " is before the first version of " ~ name
                ~ " in its log (version " ~ first.version ~ " at " ~ first.timestamp_text ~ " UTC)") -%}
        {%- endif -%}
        {%- set version = candidates[0].version -%}
    {%- elif version > latest -%}
        {%- do exceptions.raise_compiler_error("restore_version: version " ~ version ~ " of " ~ name ~ " does not exist yet; its versions run from "
            ~ first.version ~ " to " ~ latest ~ " (dbt run-operation table_history --args '{model: " ~ node.name ~ "}')") -%}
    {%- elif version < first.version -%}
        {%- do exceptions.raise_compiler_error("restore_version: version " ~ version ~ " of " ~ name ~ " is no longer in its log (delta.logRetentionDuration); "
            ~ "its versions run from " ~ first.version ~ " to " ~ latest) -%}
    {%- endif -%}
    {%- set vacuumed = gdpr_lakehouse._oldest_restorable(history) -%}
    {%- set window = gdpr_lakehouse._time_travel_floor(relation, history) -%}
    {%- set oldest = [vacuumed, window.version] | max -%}
    {%- if version < vacuumed -%}
        {%- do exceptions.raise_compiler_error("restore_version: the files of version " ~ version ~ " of " ~ name ~ " were vacuumed; "
            ~ "the oldest restorable version is " ~ oldest ~ " (" ~ (history | selectattr('version', 'eq', oldest) | first).timestamp_text ~ " UTC)") -%}
    {%- elif version < oldest -%}
        {%- do exceptions.raise_compiler_error("restore_version: version " ~ version ~ " of " ~ name ~ " is older than its delta.deletedFileRetentionDuration ("
            ~ window.text ~ "), and Delta refuses to time travel beyond it; the oldest restorable version is " ~ oldest
            ~ " (" ~ (history | selectattr('version', 'eq', oldest) | first).timestamp_text ~ " UTC)") -%}
    {%- endif -%}
    {%- set commit = history | selectattr('version', 'eq', version) | first -%}
    {#- the restored state held until the next commit that changed data -#}
    {%- set ns = namespace(until=none) -%}
    {%- for later in history | reverse if later.version > version and ns.until is none
          and later.operation not in gdpr_lakehouse._metadata_only_operations() -%}
        {%- set ns.until = later.timestamp - modules.datetime.timedelta(milliseconds=1) -%}
    {%- endfor -%}
    {{ return({
        'node': node,
        'relation': relation,
        'relation_name': name,
        'version': version,
        'timestamp_text': commit.timestamp_text,
        'latest': latest,
        'changes': version < latest,
        'point_in_time': asked if timestamp is not none else ns.until,
        'history': history,
    }) }}
{%- endmacro %}

{#- Restore the model from its savepoint `name`: the target _restore_target would
    give, with the copy as source (savepoint, source). The copy must exist and have the
    relation's columns, names and types in order: an overwrite with other columns would
    change the table's schema or fail half-way. -#}
{% macro _savepoint_target(node, name) -%}
    {%- set kept = gdpr_lakehouse._savepoints_of(node.unique_id, statuses=('kept',)) -%}
    {%- set found = kept | selectattr('name', 'eq', name) | list -%}
    {%- if not found -%}
        {%- do exceptions.raise_compiler_error("restore_version: " ~ node.name ~ " has no savepoint " ~ name ~ "; its savepoints: "
            ~ ((kept | map(attribute='name') | join(', ')) or 'none') ~ " (dbt run-operation savepoints --args '{model: " ~ node.name ~ "}')") -%}
    {%- endif -%}
    {%- set savepoint = found[0] -%}
    {%- if not gdpr_lakehouse._table_exists(savepoint.savepoint_relation.schema, savepoint.savepoint_relation.identifier) -%}
        {%- do exceptions.raise_compiler_error("restore_version: the copy of savepoint " ~ name ~ ", " ~ savepoint.savepoint_relation_name
            ~ ", does not exist (dropped by hand?); nothing was changed") -%}
    {%- endif -%}
    {%- set relation = gdpr_lakehouse._delta_relation_of(node, 'restore_version') -%}
    {%- set now = [] -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}{%- do now.append(column.name | lower ~ ' ' ~ column.dtype | lower) -%}{%- endfor -%}
    {%- set kept_columns = [] -%}
    {%- for column in adapter.get_columns_in_relation(savepoint.savepoint_relation) -%}{%- do kept_columns.append(column.name | lower ~ ' ' ~ column.dtype | lower) -%}{%- endfor -%}
    {%- if now != kept_columns -%}
        {%- do exceptions.raise_compiler_error("restore_version: " ~ relation ~ " has other columns than its savepoint " ~ name ~ " (now: "
            ~ (now | reject('in', kept_columns) | join(', ') or 'the same, in another order') ~ "; in the savepoint: " ~ (kept_columns | reject('in', now) | join(', ') or 'the same, in another order')
            ~ "); nothing was changed. Restore a version of the table instead, or rebuild the model") -%}
    {%- endif -%}
    {%- set history = gdpr_lakehouse.delta_history(relation) -%}
    {{ return({
        'node': node,
        'relation': relation,
        'relation_name': node.schema ~ '.' ~ node.alias,
        'version': savepoint.source_version,
        'timestamp_text': savepoint.source_timestamp_text ~ ', savepoint ' ~ name,
        'latest': history[0].version,
        'changes': true,
        'point_in_time': none,
        'history': history,
        'savepoint': name,
        'source': savepoint.savepoint_relation,
    }) }}
{%- endmacro %}

{% macro _metadata_only_operations() -%}
    {{ return(['VACUUM START', 'VACUUM END', 'OPTIMIZE', 'REORG', 'SET TBLPROPERTIES', 'UNSET TBLPROPERTIES',
               'CHANGE COLUMN', 'ADD COLUMNS', 'UPGRADE PROTOCOL', 'ADD CONSTRAINT', 'DROP CONSTRAINT', 'FSCK']) }}
{%- endmacro %}

{#- Downstream relations to restore with the root, parents first (appended to
    targets), and those left, with why (appended to left as [relation, why]).
    point_in_time none: the root's version is its newest data, so downstream stays. -#}
{% macro _cascade_targets(root_node, point_in_time, targets, left) -%}
    {%- set children = {} -%}
    {%- for node in graph.nodes.values() -%}
        {%- for parent in node.depends_on.nodes or [] -%}
            {%- do children.setdefault(parent, []).append(node.unique_id) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set seen = [] -%}
    {%- set queue = [root_node.unique_id] -%}
    {%- for unique_id in queue -%}
        {%- for child in children.get(unique_id, []) if child not in seen -%}
            {%- do seen.append(child) -%}
            {%- do queue.append(child) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set downstream = [] -%}
    {%- for unique_id in seen -%}
        {%- set node = graph.nodes.get(unique_id) -%}
        {%- if node and node.resource_type in ('model', 'snapshot') and gdpr_lakehouse.in_privacy_scope(node) -%}
            {%- do downstream.append(node) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set depths = gdpr_lakehouse._dag_depths(downstream) -%}
    {%- set ordered = [] -%}
    {%- for node in downstream -%}
        {%- do ordered.append({'node': node, 'depth': depths[node.unique_id], 'name': node.name}) -%}
    {%- endfor -%}
    {%- for item in ordered | sort(attribute='name') | sort(attribute='depth') -%}
        {%- set node = item.node -%}
        {%- set name = node.schema ~ '.' ~ node.alias -%}
        {%- set privacy = (node.config.meta or {}).get('privacy') or {} -%}
        {%- if node.config.materialized in ('view', 'ephemeral') -%}
            {%- if node.config.materialized == 'view' -%}
                {%- do left.append([name, 'a view: it reads its parents, nothing to restore']) -%}
            {%- endif -%}
        {%- elif privacy.get('role') in ('vault', 'control') -%}
            {%- do left.append([name, 'the key vault or a privacy control table: never restored']) -%}
        {%- elif not privacy.get('subject_key') -%}
            {%- do left.append([name, 'holds no subject data (no subject_key); the next dbt build brings it in line']) -%}
        {%- elif point_in_time is none -%}
            {%- do left.append([name, 'the root is restored to its newest data: nothing downstream to roll back']) -%}
        {%- elif adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) is none -%}
            {%- do left.append([name, 'not built']) -%}
        {%- else -%}
            {%- set history = gdpr_lakehouse.delta_history(gdpr_lakehouse._delta_relation_of(node, 'restore_version')) -%}
            {%- set candidates = history | selectattr('timestamp', 'le', point_in_time) | list -%}
            {%- set oldest = gdpr_lakehouse._oldest_restorable(history) -%}
            {%- set window = gdpr_lakehouse._time_travel_floor(gdpr_lakehouse._delta_relation_of(node, 'restore_version'), history) -%}
            {%- if not candidates -%}
                {%- do left.append([name, 'did not exist yet at ' ~ gdpr_lakehouse._utc_text(point_in_time) ~ ' UTC']) -%}
            {%- elif candidates[0].version < oldest -%}
                {%- do left.append([name, 'its version ' ~ candidates[0].version ~ ' of that time was vacuumed (oldest restorable: ' ~ oldest ~ ')']) -%}
            {%- elif candidates[0].version < window.version -%}
                {%- do left.append([name, 'its version ' ~ candidates[0].version ~ ' of that time is older than its delta.deletedFileRetentionDuration ('
                    ~ window.text ~ '; oldest restorable: ' ~ window.version ~ ')']) -%}
            {%- else -%}
                {%- do targets.append(gdpr_lakehouse._restore_target(node, candidates[0].version, none)) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}

{% macro _print_left(left) -%}
    {%- if left -%}
        {%- do gdpr_lakehouse.print_table('Left as they are (' ~ left | length ~ '):', ['relation', 'why'], left) -%}
    {%- endif -%}
{%- endmacro %}

{% macro _restore_log_start_sql(ctx, restore_id, targets, reason) -%}
merge into {{ ctx.restore_log }} as log
using (
    select * from values
    {%- for target in targets %}
        ('{{ target.relation_name }}', '{{ target.node.unique_id }}', cast({{ target.latest }} as bigint), cast({{ target.version }} as bigint),
         {{ ("timestamp'" ~ gdpr_lakehouse._utc_text(target.point_in_time, micro=true) ~ "'") if target.point_in_time is not none else 'cast(null as timestamp)' }}){{ ',' if not loop.last }}
    {%- endfor %}
    as started (relation, node, version_before, target_version, target_timestamp)
) as started
on log.restore_id = '{{ restore_id }}' and log.relation = started.relation
when not matched then insert (
    restore_id, relation, node, version_before, target_version, target_timestamp, restore_commit_version,
    reapply_commit_version, rows_restored, rows_reerased, status, reason, actor, started_at, finished_at, detail
) values (
    '{{ restore_id }}', started.relation, started.node, started.version_before, started.target_version, started.target_timestamp,
    null, null, null, null, 'restoring', {{ gdpr_lakehouse._sql_string(reason) }},
    {{ gdpr_lakehouse._sql_string(gdpr_lakehouse._actor()) }}, current_timestamp(), null, null
)
{%- endmacro %}

{#- dry_run: per relation, rows now and at the target version, rows the RESTORE would
    bring back and remove (time travel, whole rows compared), rows of erased subjects
    the target holds (they would be erased again). Reads only. -#}
{% macro _restore_dry_run(targets, left, ctx) -%}
    {%- set plan = gdpr_lakehouse._erasure_steps_by_node() -%}
    {%- set lines = [] -%}
    {%- for target in targets -%}
        {%- set then_rel = target.get('source') or (target.relation ~ ' version as of ' ~ target.version) -%}
        {%- set step = plan.get(target.node.unique_id) -%}
        {%- set query -%}
select
    (select count(*) from {{ target.relation }}) as rows_now,
    (select count(*) from {{ then_rel }}) as rows_then,
    (select count(*) from (
        select to_json(struct(*)) as row_json from {{ then_rel }}
        except all
        select to_json(struct(*)) as row_json from {{ target.relation }}
    ) as back) as rows_back,
    (select count(*) from (
        select to_json(struct(*)) as row_json from {{ target.relation }}
        except all
        select to_json(struct(*)) as row_json from {{ then_rel }}
    ) as gone) as rows_gone,
    {%- if step %}
    (select count(*) from {{ then_rel }} as target
     where target.{{ adapter.quote(step.key) }} in (select erase_key from ({{ gdpr_lakehouse._erased_keys_sql(step, ctx,
        'select distinct ' ~ adapter.quote(step.key) ~ ' as erase_key from ' ~ then_rel) }}) as erased)) as rows_reerase
    {%- else %}
    cast(0 as bigint) as rows_reerase
    {%- endif %}
        {%- endset -%}
        {%- set row = run_query(query).rows[0] -%}
        {%- do lines.append([target.relation_name, target.latest ~ ' -> ' ~ target.version ~ ' (' ~ target.timestamp_text ~ ')',
            row[0], row[1], '+' ~ row[2] ~ ' -' ~ row[3], row[4]]) -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table('Dry run: restore_version would restore ' ~ lines | length ~ ' relation(s) (nothing was changed):',
        ['relation', 'version now -> target (UTC)', 'rows now', 'rows at target', 'rows back / removed', 'rows of erased subjects to re-erase'], lines) -%}
    {%- do gdpr_lakehouse._print_left(left) -%}
    {{ return(lines) }}
{%- endmacro %}
