{#
    dbt run-operation savepoint --args '{model: silver_patients, name: month_end_2026_01, business_date: 2026-01-31}'
    dbt run-operation savepoint --args '{model: silver_patients, name: before_migration, version: 42, reason: "schema change"}'
    dbt run-operation savepoint --args '{model: silver_patients, name: today}'      # the newest version

    Keep one version of a model restorable beyond VACUUM and the time-travel window,
    without keeping an erased person:
      1. validate everything before any write: a Delta model or snapshot that declares
         meta.privacy (not the vault, the system keys or a control table), a name that
         is an identifier and not taken for that model, the version (or the one that
         closed the business day) still readable by time travel;
      2. record the savepoint in privacy.savepoints (creating) and the copy in
         privacy.restore_log (restoring), commits tagged with who and why;
      3. copy that version into its own Delta table, <savepoint_schema>.<schema>__
         <table>__<name>, with the relation's table properties (statistics columns,
         retention, deletion vectors, Change Data Feed: the evidence of an erasure
         from the copy is counted from its feed, as for the relation);
      4. re-apply every erasure made since that version to the copy (one MERGE,
         `reapply` evidence of each affected request), then the savepoint is kept.
    A copy, not a clone: a shallow clone reads the relation's files, which VACUUM
    deletes; a copy owns its files, so it outlives any VACUUM of the relation, and
    gdpr_erase, purge and forensic_scan treat it as a relation of its own.
    A run that dies between 2 and 4 is healed by the next savepoint, release_savepoint,
    restore_version or gdpr_erase (heal_interrupted_restores re-applies the erasures);
    gdpr_erase erases from a copy whatever its status.
    Restore from it: restore_version --args '{model: ..., savepoint: name}'; drop it:
    release_savepoint; list them: savepoints.
#}
{% macro savepoint(model=none, name=none, version=none, business_date=none, reason=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('savepoint', kwargs, ['model', 'name', 'version', 'business_date', 'reason']) -%}
    {{ return(adapter.dispatch('savepoint', 'gdpr_lakehouse')(model, name, version, business_date, reason)) }}
{%- endmacro %}

{% macro spark__savepoint(model, name, version, business_date, reason) -%}
    {#- 1. arguments first: a bad one changes nothing and runs no statement -#}
    {%- set reason = gdpr_lakehouse._validate_commit_reason(reason, 'savepoint') -%}
    {%- set name = gdpr_lakehouse._validate_savepoint_name(name, 'savepoint', model) -%}
    {%- if version is not none and business_date is not none -%}
        {%- do exceptions.raise_compiler_error("savepoint: give version or business_date, not both (neither: the newest version)") -%}
    {%- endif -%}
    {%- if version is not none -%}
        {%- set version = gdpr_lakehouse._validate_whole(version, 'savepoint: version', 0, 999999999999) -%}
    {%- endif -%}
    {%- set node = gdpr_lakehouse._restorable_node(model, 'savepoint') -%}
    {%- if business_date is not none -%}
        {%- set found = gdpr_lakehouse._business_version_of(model, business_date, 'savepoint') -%}
        {%- set version = found.get('version') -%}
        {%- set business_date = found.get('day') -%}
    {%- endif -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- do gdpr_lakehouse.assert_key_envelope() -%}
    {%- set schema = gdpr_lakehouse.savepoint_schema() -%}
    {%- set identifier = node.schema ~ '__' ~ node.alias ~ '__' ~ name -%}
    {%- if identifier | length > 128 -%}
        {%- do exceptions.raise_compiler_error("savepoint: the copy's table name " ~ identifier ~ " is longer than 128 characters; choose a shorter name") -%}
    {%- endif -%}
    {%- set ctx = gdpr_lakehouse._savepoint_context() -%}
    {%- do gdpr_lakehouse.heal_interrupted_restores(ctx) -%}
    {%- for taken in gdpr_lakehouse._savepoints_of(node.unique_id) if taken.name == name -%}
        {%- do exceptions.raise_compiler_error("savepoint: " ~ model ~ " already has a savepoint " ~ name ~ " (version " ~ taken.source_version
            ~ "); choose another name, or release it first: dbt run-operation release_savepoint --args '{model: " ~ model ~ ", name: " ~ name ~ "}'") -%}
    {%- endfor -%}
    {%- set relation = gdpr_lakehouse._delta_relation_of(node, 'savepoint') -%}
    {%- if version is none -%}
        {%- set version = gdpr_lakehouse.delta_history(relation, 1)[0].version -%}
    {%- endif -%}
    {#- the version must still be readable: not vacuumed, inside the time-travel window -#}
    {%- set target = gdpr_lakehouse._restore_target(node, version, none) -%}
    {%- if business_date is none -%}
        {#- the business day that version closes: the newest day tagged on it or before it -#}
        {%- set closes = namespace(day=none) -%}
        {%- for commit in target.history if commit.version <= version and closes.day is none -%}
            {%- set closes.day = gdpr_lakehouse._business_date_of(commit) -%}
        {%- endfor -%}
        {%- set business_date = closes.day -%}
    {%- endif -%}
    {%- set copy = api.Relation.create(schema=schema, identifier=identifier, type='table') -%}
    {%- if gdpr_lakehouse._table_exists(schema, identifier) -%}
        {%- do exceptions.raise_compiler_error("savepoint: " ~ copy ~ " already exists and no kept savepoint holds it; nothing was changed. "
            ~ "Drop it (drop table " ~ copy ~ ") or choose another name") -%}
    {%- endif -%}
    {%- set properties = gdpr_lakehouse._savepoint_properties(relation, node, name, version) -%}

    {#- 2. recorded first, so an erasure running from here on reaches the copy -#}
    {%- set started = modules.datetime.datetime.utcnow() -%}
    {%- set restore_id = gdpr_lakehouse.request_id('restore', run_started_at, invocation_id ~ name) -%}
    {%- set copy_name = schema ~ '.' ~ identifier -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='savepoint', reason=reason, extra={'restore_id': restore_id, 'savepoint': name})) -%}
    {%- do run_query(gdpr_lakehouse._savepoint_insert_sql(ctx, name, node, target, copy_name, business_date, restore_id, reason)) -%}
    {%- do run_query(gdpr_lakehouse._restore_log_start_sql(ctx, restore_id,
        [{'relation_name': copy_name, 'node': node, 'latest': 'null', 'version': version, 'point_in_time': none}], reason)) -%}
    {#- 3. the copy -#}
    {%- do run_query('create schema if not exists ' ~ schema) -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='restore', reason=reason, extra={'restore_id': restore_id, 'savepoint': name})) -%}
    {%- do run_query('create table ' ~ copy ~ ' using delta tblproperties (' ~ properties ~ ') as select * from ' ~ relation ~ ' version as of ' ~ version) -%}
    {%- if var('gdpr_lakehouse_fault', none) == 'after_savepoint_copy' -%}
        {%- do exceptions.raise_compiler_error("savepoint: fault injected after the copy of " ~ copy_name
            ~ " (var gdpr_lakehouse_fault, for tests); the next savepoint, restore_version or gdpr_erase heals it") -%}
    {%- endif -%}
    {#- 4. the erasures made since that version, re-applied to the copy -#}
    {%- set item = {'restore_id': restore_id, 'node': node, 'relation': copy, 'target': target} -%}
    {%- do gdpr_lakehouse._reapply_write(ctx, item) -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- set settled = gdpr_lakehouse._settle_restores(ctx, [item])[0] -%}
    {%- do gdpr_lakehouse._settle_savepoints(ctx) -%}
    {%- set seconds = (modules.datetime.datetime.utcnow() - started).total_seconds() -%}
    {%- do gdpr_lakehouse.print_table('Savepoint ' ~ name ~ ' of ' ~ target.relation_name ~ ' kept in ' ~ '%.1f' | format(seconds) ~ ' s (reason: ' ~ reason ~ '):',
        ['relation', 'version (UTC)', 'business day', 'copy', 'rows', 'rows of erased subjects removed'],
        [[target.relation_name, version ~ ' (' ~ target.timestamp_text ~ ')', business_date or '', copy_name,
          (settled.rows_restored or 0) - (settled.rows_reerased or 0), settled.rows_reerased or 0]]) -%}
    {{ return(copy_name) }}
{%- endmacro %}

{#- The relations a savepoint command reads and writes: a re-erasure's, and the registry. -#}
{% macro _savepoint_context() -%}
    {%- set ctx = gdpr_lakehouse._restore_context() -%}
    {%- do ctx.update({'savepoints': gdpr_lakehouse._control_relation('privacy_savepoints')}) -%}
    {{ return(ctx) }}
{%- endmacro %}

{#- A savepoint name: a lower-case identifier of at most 64 characters. -#}
{% macro _validate_savepoint_name(name, operation, model) -%}
    {%- if name is none -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": name is required, e.g. --args '{model: " ~ (model or 'silver_patients') ~ ", name: month_end_2026_01}'") -%}
    {%- endif -%}
    {%- if name is not string or not modules.re.match('^[a-z][a-z0-9_]{0,63}$', name) -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": savepoint name " ~ (name | tojson)[:80]
            ~ " is not allowed; give a lower-case identifier (a letter, then letters, digits or _; at most 64), e.g. month_end_2026_01") -%}
    {%- endif -%}
    {{ return(name) }}
{%- endmacro %}

{#- A reason for a commit tag: free text, no $ (Spark substitutes ${...} in it), `;`
    read as `,` (the tag is one SET statement). -#}
{% macro _validate_commit_reason(reason, operation) -%}
    {%- set reason = gdpr_lakehouse._validate_text(reason, 'reason', default=operation) | replace(';', ',') -%}
    {%- if '$' in reason -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": reason may not contain $ (Spark substitutes ${...} in the commit tag); got "
            ~ (reason | tojson)[:80]) -%}
    {%- endif -%}
    {{ return(reason) }}
{%- endmacro %}

{#- The copy's table properties: the relation's own Delta properties (which columns
    keep statistics, retention, deletion vectors, the Change Data Feed), and what it
    holds. Protocol and feature entries are Delta's to set, and so is the version
    In-Commit Timestamps were turned on at (the copy's own first commit). -#}
{% macro _savepoint_properties(relation, node, name, version) -%}
    {%- set kept = {} -%}
    {%- for key, value in gdpr_lakehouse.tblproperties_of(relation).items()
          if key.startswith('delta.') and not modules.re.match('^delta[.](minReaderVersion|minWriterVersion|feature[.].*|columnMapping[.]maxColumnId|rowTracking[.].*|enableRowTracking|checkpoint[.].*|lastCommitTimestamp|lastUpdateVersion|inCommitTimestampEnablement(Version|Timestamp))$', key) -%}
        {%- do kept.update({key: value}) -%}
    {%- endfor -%}
    {%- do kept.update({'gdpr_lakehouse.savepoint_of': node.unique_id,
        'gdpr_lakehouse.savepoint_name': name, 'gdpr_lakehouse.savepoint_version': version | string}) -%}
    {%- set pairs = [] -%}
    {%- for key, value in kept | dictsort -%}
        {%- do pairs.append(gdpr_lakehouse._sql_string(key) ~ ' = ' ~ gdpr_lakehouse._sql_string(value)) -%}
    {%- endfor -%}
    {{ return(pairs | join(', ')) }}
{%- endmacro %}

{% macro _savepoint_insert_sql(ctx, name, node, target, copy_name, business_date, restore_id, reason) -%}
insert into {{ ctx.savepoints }} (
    savepoint_name, node, relation, savepoint_relation, source_version, source_timestamp, business_date,
    restore_id, status, reason, actor, created_at, released_by, released_at
) values (
    '{{ name }}', '{{ node.unique_id }}', '{{ target.relation_name }}', '{{ copy_name }}', {{ target.version }},
    timestamp'{{ target.timestamp_text }}', {{ ("'" ~ business_date ~ "'") if business_date is not none else 'null' }},
    '{{ restore_id }}', 'creating', {{ gdpr_lakehouse._sql_string(reason) }}, {{ gdpr_lakehouse._sql_string(gdpr_lakehouse._actor()) }},
    current_timestamp(), null, null
)
{%- endmacro %}
