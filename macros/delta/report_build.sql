{#
    on-run-end: print what this run built, one line per Delta relation it wrote:
    the relation, its new Delta version, the operation Delta recorded and the rows it
    wrote (from the commit's operationMetrics). Reads DESCRIBE HISTORY ... LIMIT 1,
    so it costs one metadata query per relation. Off with --vars '{build_report: false}'.
#}
{% macro report_build(results) -%}
    {{ return(adapter.dispatch('report_build', 'gdpr_lakehouse')(results)) }}
{%- endmacro %}

{% macro default__report_build(results) -%}
    {%- if execute and var('build_report', true) and flags.WHICH in ('build', 'run', 'seed', 'snapshot') -%}
        {%- set lines = [] -%}
        {%- for result in results
              if result.node.resource_type in ('model', 'seed', 'snapshot')
              and result.status in ('success', 'pass')
              and result.node.config.get('file_format') == 'delta'
              and result.node.config.get('materialized') not in ('view', 'ephemeral') -%}
            {%- set relation = api.Relation.create(
                    database=result.node.database, schema=result.node.schema,
                    identifier=result.node.alias, type='table') -%}
            {%- set history = run_query('describe history ' ~ relation ~ ' limit 1') -%}
            {%- if history.rows | length > 0 -%}
                {%- set commit = history.rows[0] -%}
                {#- operationMetrics arrives as text (a map rendered by the driver) -#}
                {%- set metrics = commit['operationMetrics'] | string -%}
                {%- if commit['operation'] == 'MERGE' -%}
                    {%- set written = '+' ~ gdpr_lakehouse._history_metric(metrics, 'numTargetRowsInserted')
                        ~ ' ~' ~ gdpr_lakehouse._history_metric(metrics, 'numTargetRowsUpdated')
                        ~ ' -' ~ gdpr_lakehouse._history_metric(metrics, 'numTargetRowsDeleted') -%}
                {%- else -%}
                    {%- set written = gdpr_lakehouse._history_metric(metrics, 'numOutputRows') -%}
                {%- endif -%}
                {%- do lines.append([relation | string, commit['version'] | string,
                                     commit['operation'], written | string]) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if lines -%}
            {%- set header = ['relation', 'version', 'operation', 'rows (merge: +ins ~upd -del)'] -%}
            {%- set widths = [] -%}
            {%- for column in range(4) -%}
                {%- set cells = [header[column] | length] -%}
                {%- for line in lines -%}{%- do cells.append(line[column] | length) -%}{%- endfor -%}
                {%- do widths.append(cells | max) -%}
            {%- endfor -%}
            {%- do print('') -%}
            {%- do print('Built ' ~ lines | length ~ ' Delta relation(s):') -%}
            {%- for line in [header] + lines -%}
                {%- set cells = [] -%}
                {%- for column in range(4) -%}
                    {%- do cells.append(line[column].ljust(widths[column])) -%}
                {%- endfor -%}
                {%- do print('  ' ~ cells | join('  ')) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{# One number from DESCRIBE HISTORY's operationMetrics, whichever way the driver renders the map. #}
{% macro _history_metric(metrics_text, name) -%}
    {%- set found = modules.re.search('["\']?' ~ name ~ '["\']?\\s*[:=-]>?\\s*["\']?([0-9]+)', metrics_text) -%}
    {{ return(found.group(1) if found else '0') }}
{%- endmacro %}
