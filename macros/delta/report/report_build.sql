{#
    on-run-end: print what this run built, one line per Delta relation it wrote:
    the relation, its new Delta version, the operation Delta recorded and the rows it
    wrote (from the commit's operationMetrics). Reads DESCRIBE HISTORY ... LIMIT 5,
    so it costs one metadata query per relation. Off with --vars '{build_report: false}'.
#}
{% macro report_build(results) -%}
    {{ return(adapter.dispatch('report_build', 'gdpr_lakehouse')(results)) }}
{%- endmacro %}

{% macro spark__report_build(results) -%}
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
            {#- the newest commit that wrote data (the vacuum post-hook commits after it) -#}
            {%- set writes = [] -%}
            {%- for row in run_query('describe history ' ~ relation ~ ' limit 5')
                  if row['operation'] not in ('VACUUM START', 'VACUUM END') -%}
                {%- do writes.append(row) -%}
            {%- endfor -%}
            {%- if writes -%}
                {%- set commit = writes[0] -%}
                {#- operationMetrics arrives as text (a map rendered by the driver) -#}
                {%- set metrics = commit['operationMetrics'] | string -%}
                {%- set rows = gdpr_lakehouse._row_metrics() -%}
                {%- if commit['operation'] == 'MERGE' -%}
                    {%- set written = '+' ~ gdpr_lakehouse._history_metric(metrics, rows['insert']['MERGE'])
                        ~ ' ~' ~ gdpr_lakehouse._history_metric(metrics, rows['update']['MERGE'])
                        ~ ' -' ~ gdpr_lakehouse._history_metric(metrics, rows['delete']['MERGE']) -%}
                {%- else -%}
                    {%- set written = gdpr_lakehouse._history_metric(metrics, 'numOutputRows') -%}
                {%- endif -%}
                {%- do lines.append([relation | string, commit['version'] | string,
                                     commit['operation'], written | string]) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if lines -%}
            {%- do gdpr_lakehouse.print_table('Built ' ~ lines | length ~ ' Delta relation(s):',
                ['relation', 'version', 'operation', 'rows (merge: +ins ~upd -del)'], lines) -%}
        {%- endif -%}
        {%- do gdpr_lakehouse._print_landing_files(results) -%}
        {%- do gdpr_lakehouse._print_rejected(results) -%}
    {%- endif -%}
    {%- do gdpr_lakehouse._print_fixes(results) -%}
    {{ return('') }}
{%- endmacro %}

{#- The landing files this run listed (bronze.landing_batch) and what the ledger says
    of them; every rejected file of the ledger with its reason. -#}
{% macro _print_landing_files(results) -%}
    {%- set batch_results = results | selectattr('node.name', 'equalto', 'bronze_landing_batch')
        | selectattr('status', 'equalto', 'success') | list -%}
    {%- if batch_results -%}
        {%- set ledger_node = gdpr_lakehouse.engine_node('bronze_landing_ledger') -%}
        {%- set batch = api.Relation.create(schema=batch_results[0].node.schema, identifier=batch_results[0].node.alias) -%}
        {%- set ledger = api.Relation.create(schema=ledger_node.schema, identifier=ledger_node.alias) -%}
        {%- set counts = run_query('select count(*) as listed, count(ledger.file_path) as recorded, '
            ~ "count_if(ledger.status = 'ingested') as ingested, coalesce(sum(case when ledger.status = 'ingested' then ledger.rows_read end), 0) as events "
            ~ 'from ' ~ batch ~ ' as batch left join ' ~ ledger ~ ' as ledger on batch.file_path = ledger.file_path '
            ~ 'and ledger.recorded_at >= batch.listed_at').rows[0] -%}
        {%- do print('') -%}
        {%- do print('Landing files: ' ~ counts['listed'] ~ ' new or changed, ' ~ counts['ingested'] ~ ' ingested ('
            ~ counts['events'] ~ ' events), ' ~ (counts['listed'] - counts['recorded']) ~ ' not recorded (their bronze model did not run)') -%}
        {%- set lines = [] -%}
        {%- for row in run_query("select entity, element_at(split(file_path, '/'), -1) as file, issue from " ~ ledger
                                 ~ " where status = 'rejected' and file_path in (select file_path from " ~ batch ~ ") order by entity, file") -%}
            {%- do lines.append([row['entity'], row['file'], row['issue']]) -%}
        {%- endfor -%}
        {%- if lines -%}
            {%- do gdpr_lakehouse.print_table('Landing: ' ~ lines | length ~ ' file(s) rejected, listed in ' ~ ledger
                ~ ' (read again at every build until fixed):', ['entity', 'file', 'issue'], lines) -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- Landing events a model of this run lists as not applied (meta.report:
    rejected_events, e.g. bronze.rejected_events): how many, per entity and rule. -#}
{% macro _print_rejected(results) -%}
    {%- for result in results
          if result.node.resource_type == 'model' and result.status == 'success'
          and (result.node.config.meta or {}).get('report') == 'rejected_events' -%}
        {%- set relation = api.Relation.create(schema=result.node.schema, identifier=result.node.alias) -%}
        {%- set lines = [] -%}
        {%- set total = namespace(events=0) -%}
        {%- for row in run_query('select entity, reason, count(*) as events from ' ~ relation
                                 ~ ' group by entity, reason order by entity, reason') -%}
            {%- do lines.append([row['entity'], row['reason'], row['events'] | string]) -%}
            {%- set total.events = total.events + row['events'] | int -%}
        {%- endfor -%}
        {%- if lines -%}
            {%- do gdpr_lakehouse.print_table('Landing: ' ~ total.events ~ ' event(s) not applied, listed in '
                ~ relation ~ ':', ['entity', 'reason', 'events'], lines) -%}
        {%- else -%}
            {%- do print('') -%}
            {%- do print('Landing: every event applied or superseded (' ~ relation ~ ' is empty)') -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}

{#- A failed test that declares meta.fix (the one command that makes it green, e.g. a
    check that holds only once the audit stream or a rebuild has caught up) says so. -#}
{% macro _print_fixes(results) -%}
    {%- set lines = [] -%}
    {%- for result in results if execute
          and result.node.resource_type == 'test' and result.status in ('fail', 'warn', 'error')
          and ((result.node.config.meta or {}).get('fix')) -%}
        {%- do lines.append([result.node.name, result.node.config.meta.fix]) -%}
    {%- endfor -%}
    {%- if lines -%}
        {%- do gdpr_lakehouse.print_table(lines | length ~ ' failed check(s) have a known fix:', ['check', 'run'], lines) -%}
    {%- endif -%}
{%- endmacro %}

{# One number from DESCRIBE HISTORY's operationMetrics, whichever way the driver renders the map. #}
{% macro _history_metric(metrics_text, name) -%}
    {%- set found = modules.re.search('["\']?' ~ name ~ '["\']?\\s*[:=-]>?\\s*["\']?([0-9]+)', metrics_text) -%}
    {{ return(found.group(1) if found else '0') }}
{%- endmacro %}
