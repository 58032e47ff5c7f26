{#- True where REORG ... APPLY (PURGE) works: executors inside the driver's JVM
    (spark.master local[...]), the laptop and CI default. -#}
{% macro reorg_purge_supported() -%}
    {{ return(adapter.dispatch('reorg_purge_supported', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__reorg_purge_supported() -%}
    {%- if not execute -%}{{ return(true) }}{%- endif -%}
    {%- set master = run_query('set spark.master').columns[1].values()[0] | string -%}
    {{ return(master.startswith('local')) }}
{%- endmacro %}
