{#- Physically remove the rows deletion vectors mark in one Delta table; the number of
    files rewritten. The project's one REORG: gdpr_erase runs it on the vault, and
    python -m python_jobs.purge on every relation (python_jobs.macros.on_session).

    REORG TABLE ... APPLY (PURGE) is the statement for it. Two things of open-source
    Delta (4.0.1 through 4.4.0) bend it:
    - A liquid-clustered table's REORG skips the files OPTIMIZE has clustered: the
      marked rows stay in their Parquet files and the command reports success. The
      table is unclustered (CLUSTER BY NONE), purged and clustered again by the same
      columns, kept meanwhile in the table property gdpr_lakehouse.purge.clusterBy, so
      a run a crash stopped half way is finished by the next one.
    - REORG cannot run on a cluster whose executors are not the driver's JVM: its file
      filter asks for the active SparkSession inside an executor task ("No active or
      default Spark session found", ReorgTableHelper.filterParquetFilesOnExecutors,
      delta-io/delta#5697). python_jobs.purge then runs this macro in a local
      application of its own (python_jobs.reorg), which rewrites only the files that
      carry deletion vectors; a dbt operation cannot start one, so here the table is
      rewritten by OPTIMIZE ... ZORDER BY its first column (Z-ordering rewrites every
      file, a lone one too; the statistics check is lifted for the column).
    Databricks runs REORG itself. -#}
{% macro purge_deletion_vectors(relation) -%}
    {{ return(adapter.dispatch('purge_deletion_vectors', 'gdpr_lakehouse')(relation)) }}
{%- endmacro %}

{% macro spark__purge_deletion_vectors(relation) -%}
    {%- if not execute -%}{{ return(0) }}{%- endif -%}
    {%- set before = run_query('describe history ' ~ relation ~ ' limit 1').rows[0]['version'] | int -%}
    {%- set columns = gdpr_lakehouse._unclustered_for_purge(relation) -%}
    {%- if gdpr_lakehouse.reorg_purge_supported() -%}
        {%- do run_query('reorg table ' ~ relation ~ ' apply (purge)') -%}
        {%- set operation = 'REORG' -%}
    {%- else -%}
        {%- set detail = run_query('describe detail ' ~ relation).rows[0] -%}
        {%- set raw = detail['partitionColumns'] -%}
        {%- set partitions = (fromjson(raw) if raw is string else (raw or [])) | list -%}
        {%- set names = run_query('select * from ' ~ relation ~ ' limit 0').column_names
              | reject('in', partitions) | list -%}
        {%- set check = 'spark.databricks.delta.optimize.zorder.checkStatsCollection.enabled' -%}
        {%- do run_query('set ' ~ check ~ ' = false') -%}
        {%- do run_query('optimize ' ~ relation ~ ' zorder by (' ~ adapter.quote(names[0]) ~ ')') -%}
        {%- do run_query('reset ' ~ check) -%}
        {%- set operation = 'OPTIMIZE' -%}
    {%- endif -%}
    {%- do gdpr_lakehouse._clustered_again_after_purge(relation, columns) -%}
    {{ return(gdpr_lakehouse._committed_metric(relation, operation, 'numRemovedFiles', before)) }}
{%- endmacro %}

{% macro databricks__purge_deletion_vectors(relation) -%}
    {%- if not execute -%}{{ return(0) }}{%- endif -%}
    {%- set before = run_query('describe history ' ~ relation ~ ' limit 1').rows[0]['version'] | int -%}
    {%- do run_query('reorg table ' ~ relation ~ ' apply (purge)') -%}
    {{ return(gdpr_lakehouse._committed_metric(relation, 'REORG', 'numRemovedFiles', before)) }}
{%- endmacro %}

{#- A clustered table's clustering columns, after unclustering it for a purge (kept in
    a table property first); an interrupted detour's columns from that property. [] for
    a table that is not clustered. -#}
{% macro _unclustered_for_purge(relation) -%}
    {%- set key = 'gdpr_lakehouse.purge.clusterBy' -%}
    {%- set raw = run_query('describe detail ' ~ relation).rows[0]['clusteringColumns'] -%}
    {%- set columns = (fromjson(raw) if raw is string else (raw or [])) | list -%}
    {%- if not columns -%}
        {%- set kept = run_query("show tblproperties " ~ relation ~ " ('" ~ key ~ "')").rows -%}
        {%- set value = (kept[0][-1] | string) if kept else '' -%}
        {%- if value and 'does not have property' not in value -%}
            {%- set columns = value.split(',') | reject('equalto', '') | list -%}
        {%- endif -%}
    {%- endif -%}
    {%- if columns -%}
        {%- do run_query("alter table " ~ relation ~ " set tblproperties ('" ~ key ~ "' = '" ~ (columns | join(',')) ~ "')") -%}
        {%- do run_query('alter table ' ~ relation ~ ' cluster by none') -%}
    {%- endif -%}
    {{ return(columns) }}
{%- endmacro %}

{% macro _clustered_again_after_purge(relation, columns) -%}
    {%- if columns -%}
        {%- set quoted = [] -%}
        {%- for column in columns -%}{%- do quoted.append('`' ~ (column | replace('`', '``')) ~ '`') -%}{%- endfor -%}
        {%- do run_query('alter table ' ~ relation ~ ' cluster by (' ~ (quoted | join(', ')) ~ ')') -%}
        {%- do run_query("alter table " ~ relation ~ " unset tblproperties if exists ('gdpr_lakehouse.purge.clusterBy')") -%}
    {%- endif -%}
{%- endmacro %}

{#- A metric of the newest `operation` committed after version `after`; 0 when the
    command committed nothing (an older commit's figures must not be reported). -#}
{% macro _committed_metric(relation, operation, name, after) -%}
    {%- for row in run_query('describe history ' ~ relation ~ ' limit 10')
          if (row['version'] | int) > after and row['operation'] == operation -%}
        {{ return(gdpr_lakehouse._history_metric(row['operationMetrics'] | string, name) | int) }}
    {%- endfor -%}
    {{ return(0) }}
{%- endmacro %}
