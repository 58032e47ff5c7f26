{# A Delta table's history as the operations read it: versions, rows changed, what is still restorable. #}

{#- DESCRIBE HISTORY as a list (newest first) of {version, timestamp, timestamp_text,
    operation, parameters, metrics (name -> int), tag (userMetadata as a mapping)}. -#}
{% macro delta_history(relation, limit=none) -%}
    {{ return(adapter.dispatch('delta_history', 'gdpr_lakehouse')(relation, limit)) }}
{%- endmacro %}

{% macro spark__delta_history(relation, limit=none) -%}
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
    {%- set rows = gdpr_lakehouse._row_metrics() -%}
    {%- if commit.operation == 'MERGE' -%}
        {{ return('+' ~ m.get(rows['insert']['MERGE'], 0) ~ ' ~' ~ m.get(rows['update']['MERGE'], 0) ~ ' -' ~ m.get(rows['delete']['MERGE'], 0)) }}
    {%- elif commit.operation in rows['delete'] -%}
        {{ return('-' ~ m.get(rows['delete'][commit.operation], 0)) }}
    {%- elif commit.operation in rows['update'] -%}
        {{ return('~' ~ m.get(rows['update'][commit.operation], 0)) }}
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

{#- A timestamp from a query (the driver hands them over in its local time) as UTC text. -#}
{% macro _utc_text(value, micro=false) -%}
    {%- if value is none -%}{{ return('') }}{%- endif -%}
    {{ return(value.astimezone(modules.pytz.utc).strftime('%Y-%m-%d %H:%M:%S' ~ ('.%f' if micro else ''))) }}
{%- endmacro %}

{% macro _vacuum_retention_millis(vacuum) -%}
    {%- set specified = modules.re.search('specifiedRetentionMillis["\']?\\s*(?::|->|=)\\s*["\']?([0-9]+)', vacuum.parameters) -%}
    {%- set default = modules.re.search('defaultRetentionMillis["\']?\\s*(?::|->|=)\\s*["\']?([0-9]+)', vacuum.parameters) -%}
    {{ return((specified or default).group(1) | int if (specified or default) else 604800000) }}
{%- endmacro %}
