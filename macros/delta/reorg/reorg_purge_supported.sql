{#- True where REORG ... APPLY (PURGE) works: executors inside the driver's JVM
    (spark.master local[...]), the laptop and CI default. -#}
{% macro reorg_purge_supported() -%}
    {{ return(adapter.dispatch('reorg_purge_supported', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__reorg_purge_supported() -%}
    {%- if not execute -%}{{ return(true) }}{%- endif -%}
    {{ return(gdpr_lakehouse._reorg_purge_runs_on(run_query('set spark.master').columns[1].values()[0])) }}
{%- endmacro %}

{#- The rule itself, for a given spark.master (python_jobs.purge reads it too). -#}
{% macro _reorg_purge_runs_on(master) -%}
    {{ return((master | string).startswith('local')) }}
{%- endmacro %}
