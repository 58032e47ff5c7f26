{#
    dbt run-operation table_history --args '{model: silver_patients}'
    dbt run-operation table_history --args '{model: bronze_patients, limit: 50}'

    The Delta history of a model, snapshot or seed: one line per version with its
    time, operation, rows changed (from operationMetrics), who and why (the commit's
    userMetadata tag) and whether restore_version can still go back to it (its files
    not vacuumed), then the model's savepoints (versions kept in a copy beyond
    VACUUM). Reads DESCRIBE HISTORY and privacy.savepoints only.
#}

{% macro table_history(model=none, limit=20) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('table_history', kwargs, ['model', 'limit']) -%}
    {{ return(adapter.dispatch('table_history', 'gdpr_lakehouse')(model, limit)) }}
{%- endmacro %}

{% macro spark__table_history(model, limit) -%}
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
    {#- versions kept beyond VACUUM in a savepoint's copy (restore_version savepoint: name) -#}
    {%- set kept = [] -%}
    {%- for savepoint in gdpr_lakehouse._savepoints_of(node.unique_id) -%}
        {%- do kept.append([savepoint.name, savepoint.source_version ~ ' (' ~ savepoint.source_timestamp_text ~ ')',
            savepoint.business_date or '', savepoint.savepoint_relation_name, savepoint.status]) -%}
    {%- endfor -%}
    {%- if kept -%}
        {%- do gdpr_lakehouse.print_table('Savepoints of ' ~ node.schema ~ '.' ~ node.alias ~ ' (restorable whatever VACUUM deletes: restore_version savepoint: <name>):',
            ['savepoint', 'version (UTC)', 'business day', 'copy', 'status'], kept) -%}
    {%- endif -%}
    {{ return(lines) }}
{%- endmacro %}
