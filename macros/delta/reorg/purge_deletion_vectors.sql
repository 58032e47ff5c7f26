{#- Physically remove the rows deletion vectors mark in one Delta table.

    REORG TABLE ... APPLY (PURGE) is the statement for it. Open-source Delta (4.0.1
    through 4.4.0) cannot run it on a cluster whose executors are not the driver's JVM: its file
    filter asks for the active SparkSession inside an executor task ("No active or
    default Spark session found", ReorgTableHelper.filterParquetFilesOnExecutors,
    delta-io/delta#5697). There the table is rewritten by OPTIMIZE ... ZORDER BY its
    first column: Z-ordering rewrites every file, a lone one too (plain OPTIMIZE skips
    a bin of one file, so a small table's only file would keep its deleted rows), and
    the statistics check is lifted for the column. gdpr_erase calls this for the
    vault, which has just lost rows: a dbt operation cannot start the local
    application python_jobs.purge uses there (python_jobs.reorg). Databricks runs
    REORG itself. -#}
{% macro purge_deletion_vectors(relation) -%}
    {{ return(adapter.dispatch('purge_deletion_vectors', 'gdpr_lakehouse')(relation)) }}
{%- endmacro %}

{% macro spark__purge_deletion_vectors(relation) -%}
    {%- if gdpr_lakehouse.reorg_purge_supported() -%}
        {%- do run_query('reorg table ' ~ relation ~ ' apply (purge)') -%}
    {%- else -%}
        {%- set detail = run_query('describe detail ' ~ relation).rows[0] -%}
        {%- set raw = detail['partitionColumns'] -%}
        {%- set partitions = (fromjson(raw) if raw is string else (raw or [])) | list -%}
        {%- set columns = run_query('select * from ' ~ relation ~ ' limit 0').column_names
              | reject('in', partitions) | list -%}
        {%- set settings = {
            'spark.databricks.delta.optimize.zorder.checkStatsCollection.enabled': 'false',
        } -%}
        {%- for key in settings -%}
            {%- do run_query('set ' ~ key ~ ' = ' ~ settings[key]) -%}
        {%- endfor -%}
        {%- do run_query('optimize ' ~ relation ~ ' zorder by (' ~ adapter.quote(columns[0]) ~ ')') -%}
        {%- for key in settings -%}
            {%- do run_query('reset ' ~ key) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}

{% macro databricks__purge_deletion_vectors(relation) -%}
    {%- do run_query('reorg table ' ~ relation ~ ' apply (purge)') -%}
{%- endmacro %}
