{#
    dbt run-operation table_history --args '{model: silver_patients}'
    dbt run-operation table_history --args '{model: bronze_patients, limit: 50}'

    The Delta history of a model, snapshot or seed: one line per version with its
    time, operation, rows changed (from operationMetrics), who and why (the commit's
    userMetadata tag) and whether restore_version can still go back to it (its files
    not vacuumed). Reads DESCRIBE HISTORY only.
#}
{% macro table_history(model=none, limit=20) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('table_history', kwargs, ['model', 'limit']) -%}
    {{ return(adapter.dispatch('table_history', 'gdpr_lakehouse')(model, limit)) }}
{%- endmacro %}

{% macro default__table_history(model, limit) -%}
    {%- set limit = gdpr_lakehouse._validate_whole(limit, 'limit', 1, 1000) -%}
    {%- set node = gdpr_lakehouse._delta_node(model, 'table_history', resource_types=('model', 'snapshot', 'seed')) -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set relation = gdpr_lakehouse._delta_relation_of(node, 'table_history') -%}
    {%- set history = gdpr_lakehouse.delta_history(relation) -%}
    {%- set vacuumed = gdpr_lakehouse._oldest_restorable(history) -%}
    {%- set window = gdpr_lakehouse._time_travel_floor(relation, history) -%}
    {%- set oldest = [vacuumed, window.version] | max -%}
    {%- set lines = [] -%}
    {%- for commit in history[:limit] -%}
        {%- set tag = commit.tag -%}
        {%- set requests = tag.get('request_ids') or [] -%}
        {%- set subject = tag.get('restore_id') or tag.get('request_id')
            or ((requests[:2] | join(',')) ~ ('...' if requests | length > 2 else '') if requests else none) or tag.get('batch_id') -%}
        {%- set why = [tag.get('purpose'), subject, tag.get('reason')] | select | join(' ') -%}
        {%- do lines.append([
            commit.version, commit.timestamp_text, commit.operation, gdpr_lakehouse._rows_changed(commit),
            tag.get('actor', '') ~ ((' (' ~ tag.get('command') ~ ')') if tag.get('command') else ''),
            why[:60], 'yes' if commit.version >= oldest else ('no (vacuumed)' if commit.version < vacuumed
                else 'no (past file retention)'),
        ]) -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table(
        node.schema ~ '.' ~ node.alias ~ ': ' ~ history | length ~ ' version(s) in the log, newest first'
        ~ ((' (first ' ~ limit ~ ')') if history | length > limit else '')
        ~ '; restore_version reaches back to version ' ~ oldest ~ ':',
        ['version', 'timestamp (UTC)', 'operation', 'rows changed', 'actor (command)', 'why', 'restorable'], lines) -%}
    {{ return(lines) }}
{%- endmacro %}

{#- DESCRIBE HISTORY as a list (newest first) of {version, timestamp, timestamp_text,
    operation, parameters, metrics (name -> int), tag (userMetadata as a mapping)}. -#}
{% macro delta_history(relation, limit=none) -%}
    {%- set commits = [] -%}
    {%- for row in run_query('describe history ' ~ relation ~ ((' limit ' ~ limit | int) if limit else '')) -%}
        {%- set tag = {} -%}
        {%- if row['userMetadata'] and (row['userMetadata'] | trim)[:1] == '{' -%}
            {%- set tag = fromjson(row['userMetadata']) or {} -%}
        {%- endif -%}
        {%- set metrics = {} -%}
        {%- for name, value in modules.re.findall('["\']?([A-Za-z]+)["\']?\\s*(?::|->|=)\\s*["\']?(-?[0-9]+)', row['operationMetrics'] | string) -%}
            {%- do metrics.update({name: value | int}) -%}
        {%- endfor -%}
        {%- do commits.append({
            'version': row['version'] | int,
            'timestamp': row['timestamp'],
            'timestamp_text': gdpr_lakehouse._utc_text(row['timestamp']),
            'operation': row['operation'],
            'parameters': row['operationParameters'] | string,
            'metrics': metrics,
            'tag': tag if tag is mapping else {},
        }) -%}
    {%- endfor -%}
    {{ return(commits | sort(attribute='version', reverse=true)) }}
{%- endmacro %}

{#- Rows a commit changed, in words, from its operation metrics. -#}
{% macro _rows_changed(commit) -%}
    {%- set m = commit.metrics -%}
    {%- if commit.operation == 'MERGE' -%}
        {{ return('+' ~ m.get('numTargetRowsInserted', 0) ~ ' ~' ~ m.get('numTargetRowsUpdated', 0) ~ ' -' ~ m.get('numTargetRowsDeleted', 0)) }}
    {%- elif commit.operation == 'DELETE' -%}
        {{ return('-' ~ m.get('numDeletedRows', 0)) }}
    {%- elif commit.operation == 'UPDATE' -%}
        {{ return('~' ~ m.get('numUpdatedRows', 0)) }}
    {%- elif commit.operation == 'RESTORE' -%}
        {{ return('files +' ~ m.get('numRestoredFiles', 0) ~ ' -' ~ m.get('numRemovedFiles', 0)) }}
    {%- elif commit.operation == 'VACUUM END' -%}
        {{ return('files deleted ' ~ m.get('numDeletedFiles', 0)) }}
    {%- elif 'numOutputRows' in m -%}
        {{ return(m.numOutputRows | string) }}
    {%- elif 'numRemovedFiles' in m or 'numAddedFiles' in m -%}
        {{ return('files +' ~ m.get('numAddedFiles', 0) ~ ' -' ~ m.get('numRemovedFiles', 0)) }}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{#- Did a commit remove data or deletion-vector files (which VACUUM may delete later)? -#}
{% macro _commit_removes_files(commit) -%}
    {%- for name, value in commit.metrics.items()
          if value > 0 and (('Removed' in name and ('Files' in name or 'DeletionVectors' in name)) or 'DeletionVectorsUpdated' in name) -%}
        {{ return(true) }}
    {%- endfor -%}
    {%- if commit.operation in ('CREATE OR REPLACE TABLE AS SELECT', 'REPLACE TABLE AS SELECT', 'CREATE OR REPLACE TABLE',
                                'REPLACE TABLE', 'TRUNCATE', 'MERGE', 'DELETE', 'UPDATE', 'OPTIMIZE', 'REORG', 'RESTORE')
          and not commit.metrics -%}
        {{ return(true) }}
    {%- endif -%}
    {{ return(commit.operation == 'WRITE' and 'Overwrite' in commit.parameters) }}
{%- endmacro %}

{#- The oldest version RESTORE can still reach: a VACUUM deletes the files that commits
    removed before its cutoff (its start minus the retention it ran with), so every
    version older than the newest such commit misses files. History is newest first. -#}
{% macro _oldest_restorable(history) -%}
    {%- set ns = namespace(oldest=(history | map(attribute='version') | min) if history else 0) -%}
    {%- for vacuum in history if vacuum.operation == 'VACUUM START' -%}
        {%- set cutoff = vacuum.timestamp - modules.datetime.timedelta(milliseconds=gdpr_lakehouse._vacuum_retention_millis(vacuum)) -%}
        {%- for commit in history
              if commit.version < vacuum.version and commit.version > ns.oldest
              and commit.timestamp <= cutoff and gdpr_lakehouse._commit_removes_files(commit) -%}
            {%- set ns.oldest = commit.version -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(ns.oldest) }}
{%- endmacro %}

{#- A model, snapshot (or seed) of this project by name, for an operation that acts on
    its Delta table; a clear error otherwise. -#}
{% macro _delta_node(name, operation, resource_types=('model', 'snapshot')) -%}
    {%- if name is not string or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}$', name) -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": model must be the name of a dbt " ~ resource_types | join(', ')
            ~ " (letters, digits, _), e.g. --args '{model: silver_patients}'; got " ~ (name | tojson)[:80]) -%}
    {%- endif -%}
    {%- set found = [] -%}
    {%- for node in graph.nodes.values()
          if node.resource_type in resource_types and gdpr_lakehouse.in_privacy_scope(node) and node.name == name -%}
        {%- do found.append(node) -%}
    {%- endfor -%}
    {%- if not found -%}
        {%- set known = [] -%}
        {%- for node in graph.nodes.values()
              if node.resource_type in resource_types and gdpr_lakehouse.in_privacy_scope(node)
              and node.config.materialized not in ('view', 'ephemeral') -%}
            {%- do known.append(node.name) -%}
        {%- endfor -%}
        {%- set kinds = resource_types | list -%}
        {%- set kinds_text = ((kinds[:-1] | join(', ')) ~ ' or ' ~ kinds[-1]) if kinds | length > 1 else kinds[0] -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ name ~ " is not a " ~ kinds_text
            ~ " of this project; Delta tables: " ~ (known | sort | join(', '))[:900]) -%}
    {%- endif -%}
    {%- set node = found[0] -%}
    {%- if node.config.materialized in ('view', 'ephemeral') or node.config.get('file_format') != 'delta' -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ name ~ " is " ~ ('a ' ~ node.config.materialized if node.config.materialized in ('view', 'ephemeral')
            else 'stored as ' ~ node.config.get('file_format')) ~ ", not a Delta table: it has no versions to list or restore") -%}
    {%- endif -%}
    {{ return(node) }}
{%- endmacro %}

{#- The node's built relation, checked to be a Delta table. -#}
{% macro _delta_relation_of(node, operation) -%}
    {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
    {%- if relation is none -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ node.schema ~ "." ~ node.alias ~ " (" ~ node.name
            ~ ") does not exist yet; run `dbt build` first") -%}
    {%- endif -%}
    {%- if relation.is_delta is defined and not relation.is_delta -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ relation ~ " is not a Delta table (its catalog entry says otherwise); "
            ~ "only Delta tables have versions") -%}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}

{#- A whole number argument within bounds (ints, or strings of digits). -#}
{% macro _validate_whole(value, argument, minimum, maximum) -%}
    {%- if value is string and modules.re.match('^[0-9]{1,12}$', value) -%}
        {%- set value = value | int -%}
    {%- endif -%}
    {%- if value is not number or value is sameas true or value is sameas false or value != value | int
          or value < minimum or value > maximum -%}
        {%- do exceptions.raise_compiler_error(argument ~ " must be a whole number from " ~ minimum ~ " to " ~ maximum
            ~ "; got " ~ (value | tojson)[:40]) -%}
    {%- endif -%}
    {{ return(value | int) }}
{%- endmacro %}

{#- A timestamp from a query (the driver hands them over in its local time) as UTC text. -#}
{% macro _utc_text(value, micro=false) -%}
    {%- if value is none -%}{{ return('') }}{%- endif -%}
    {{ return(value.astimezone(modules.pytz.utc).strftime('%Y-%m-%d %H:%M:%S' ~ ('.%f' if micro else ''))) }}
{%- endmacro %}

{#- The oldest version whose Change Data Feed can still be read: VACUUM deletes the
    change files (and removed data files) of every commit older than its cutoff, so a
    consumer that fell behind past a VACUUM must recount. -1 when nothing runs. -#}
{% macro cdf_readable_from(relation) -%}
    {%- if not execute -%}{{ return(-1) }}{%- endif -%}
    {%- set history = gdpr_lakehouse.delta_history(relation) -%}
    {{ return([gdpr_lakehouse._cdf_readable_from_history(history), gdpr_lakehouse._time_travel_floor(relation, history).version] | max) }}
{%- endmacro %}

{#- Delta 4.1 on (delta-io/delta#5022) refuses time travel (SELECT ... VERSION AS OF,
    RESTORE, CLONE, a change feed's starting version) to a version whose commit is older
    than the table's delta.deletedFileRetentionDuration; the newest version is always
    reachable. {version: the oldest version inside that window, hours: the retention,
    text: the retention as the table property says it}.
    A version that leaves the window within the next 10 minutes counts as gone, so an
    operation planned on it cannot fail halfway. -#}
{% macro _time_travel_floor(relation, history) -%}
    {%- set text = gdpr_lakehouse.tblproperties_of(relation).get('delta.deletedFileRetentionDuration') -%}
    {%- set hours = gdpr_lakehouse._retention_hours(text) if text is not none else 168 -%}
    {%- if hours is none -%}
        {%- do exceptions.raise_compiler_error(relation ~ ": delta.deletedFileRetentionDuration is " ~ text ~ ", not an interval Delta reads") -%}
    {%- endif -%}
    {%- set now = run_query('select current_timestamp()').rows[0][0] -%}
    {%- set floor = gdpr_lakehouse._time_travel_floor_of(history, hours, now) -%}
    {%- do floor.update({'text': text or 'interval 7 days'}) -%}
    {{ return(floor) }}
{%- endmacro %}

{% macro _time_travel_floor_of(history, hours, now) -%}
    {%- set cutoff = now - modules.datetime.timedelta(hours=hours) + modules.datetime.timedelta(minutes=10) -%}
    {%- set latest = (history | map(attribute='version') | max) if history else 0 -%}
    {%- set inside = history | selectattr('timestamp', 'ge', cutoff) | map(attribute='version') | list -%}
    {{ return({'version': (inside | min) if inside else latest, 'hours': hours | round(2)}) }}
{%- endmacro %}

{% macro _cdf_readable_from_history(history) -%}
    {%- set ns = namespace(first=(history | map(attribute='version') | min) if history else 0) -%}
    {%- for vacuum in history if vacuum.operation == 'VACUUM START' -%}
        {%- set cutoff = vacuum.timestamp - modules.datetime.timedelta(milliseconds=gdpr_lakehouse._vacuum_retention_millis(vacuum)) -%}
        {%- for commit in history if commit.version < vacuum.version and commit.version >= ns.first and commit.timestamp <= cutoff -%}
            {%- set ns.first = commit.version + 1 -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(ns.first) }}
{%- endmacro %}

{% macro _vacuum_retention_millis(vacuum) -%}
    {%- set specified = modules.re.search('specifiedRetentionMillis["\']?\\s*(?::|->|=)\\s*["\']?([0-9]+)', vacuum.parameters) -%}
    {%- set default = modules.re.search('defaultRetentionMillis["\']?\\s*(?::|->|=)\\s*["\']?([0-9]+)', vacuum.parameters) -%}
    {{ return((specified or default).group(1) | int if (specified or default) else 604800000) }}
{%- endmacro %}

{#- An incremental consumer of a Change Data Feed that has consumed up to version
    `consumed` must recount when the feed no longer reaches back to consumed + 1. -#}
{% macro cdf_must_recount(upstream, consumed, latest) -%}
    {%- set readable_from = gdpr_lakehouse.cdf_readable_from(upstream) | int -%}
    {%- set recount = execute and latest > consumed and consumed + 1 < readable_from -%}
    {%- if recount -%}
        {%- do log(this ~ ": the change feed of " ~ upstream ~ " starts at version " ~ readable_from ~ ", version "
            ~ (consumed + 1) ~ " is the next to consume; recounting at version " ~ latest, info=true) -%}
    {%- endif -%}
    {{ return(recount) }}
{%- endmacro %}
