{#- Which operationMetrics count the rows an operation changed, by change type, declared
    once: table_history and the build report print them, python_jobs.audit_stream
    audits from them when a version's change data files are gone. `uncounted`: the
    operations that change rows without counting them all (a RESTORE swaps files). -#}
{% macro _row_metrics() -%}
    {{ return({
        'insert': {
            'MERGE': 'numTargetRowsInserted',
            'WRITE': 'numOutputRows',
            'STREAMING UPDATE': 'numOutputRows',
            'CREATE TABLE AS SELECT': 'numOutputRows',
            'CREATE OR REPLACE TABLE AS SELECT': 'numOutputRows',
            'REPLACE TABLE AS SELECT': 'numOutputRows',
            'COPY INTO': 'numOutputRows',
        },
        'update': {'MERGE': 'numTargetRowsUpdated', 'UPDATE': 'numUpdatedRows'},
        'delete': {'MERGE': 'numTargetRowsDeleted', 'DELETE': 'numDeletedRows'},
        'uncounted': ['RESTORE', 'TRUNCATE', 'CREATE OR REPLACE TABLE AS SELECT', 'REPLACE TABLE AS SELECT'],
    }) }}
{%- endmacro %}
