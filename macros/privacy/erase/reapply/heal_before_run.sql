{#- on-run-start of every dbt run, build, snapshot, seed and test: a restore_version that
    died between its RESTORE and the re-erasure is healed before anything reads the
    restored table (a snapshot would copy the resurrected subjects). Nothing to do on a
    lakehouse without a restore log yet. -#}
{% macro heal_before_run() -%}
    {{ return(adapter.dispatch('heal_before_run', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__heal_before_run() -%}
    {%- if execute -%}
        {%- set node = gdpr_lakehouse.engine_node('privacy_restore_log') -%}
        {%- set log_relation = adapter.get_relation(database=none, schema=node.schema, identifier=node.alias) -%}
        {%- if log_relation is not none and gdpr_lakehouse.scalar_query(
              "select count(*) from " ~ log_relation ~ " where status = 'restoring'", 0) | int > 0 -%}
            {%- do gdpr_lakehouse.heal_interrupted_restores(gdpr_lakehouse._restore_context()) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
