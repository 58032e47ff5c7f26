{#
    Post-hook (dbt_project.yml, every model and snapshot): VACUUM the relation after
    each build when it holds subjects' data (meta.privacy subject_key with on_erasure
    delete or anonymize), so old files never outlive the policy window. Kill switch:
    --vars '{vacuum_on_build: false}'. Retention: the table's own property, or var
    vacuum_retain_hours. Runs the statement itself and renders nothing.
#}
{% macro vacuum_after_build() -%}
    {{ return(adapter.dispatch('vacuum_after_build', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__vacuum_after_build() -%}
    {%- if execute and gdpr_lakehouse._flag_var('vacuum_on_build', true) and model is mapping -%}
        {%- set privacy = ((model.config or {}).get('meta') or {}).get('privacy') or {} -%}
        {%- if privacy.get('subject_key') and privacy.get('on_erasure') in ('delete', 'anonymize')
              and model.config.materialized not in ('view', 'ephemeral') -%}
            {%- if var('vacuum_retain_hours', none) is none and gdpr_lakehouse._vacuum_cannot_delete_yet(this) -%}
                {%- do log('vacuum ' ~ this ~ ': skipped, its whole history is younger than its deleted-file retention') -%}
            {%- else -%}
                {%- do gdpr_lakehouse.vacuum_relation(this, var('vacuum_retain_hours', none)) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- Can a VACUUM of the relation not delete a single file yet? VACUUM deletes only files
    removed from the table (or, never committed, written into its folder) before now
    minus delta.deletedFileRetentionDuration; a table whose whole history, from version
    0, is younger than that window less an hour holds no such file. Anything unknown (no
    version 0 among the newest 100 commits, a property that is not an interval,
    timestamps that are text, a version 0 later than now) answers false, and the VACUUM runs. -#}
{% macro _vacuum_cannot_delete_yet(relation) -%}
    {%- if not execute -%}{{ return(false) }}{%- endif -%}
    {%- set shown = run_query("show tblproperties " ~ relation ~ " ('delta.deletedFileRetentionDuration')") -%}
    {%- set hours = gdpr_lakehouse._retention_hours(shown.rows[0][-1] if shown.rows else none) -%}
    {%- if hours is none or hours <= 1 -%}{{ return(false) }}{%- endif -%}
    {%- set first = gdpr_lakehouse.delta_history(relation, 100) | selectattr('version', 'equalto', 0) | list -%}
    {%- if not first -%}{{ return(false) }}{%- endif -%}
    {%- set now = run_query('select current_timestamp() as now').rows[0][0] -%}
    {%- set created = first[0].timestamp -%}
    {%- if now is none or created is none or now is string or created is string -%}{{ return(false) }}{%- endif -%}
    {%- set age = (now - created).total_seconds() -%}
    {#- a version 0 from the future is a clock it cannot trust: run the VACUUM -#}
    {{ return(age >= 0 and age < (hours - 1) * 3600) }}
{%- endmacro %}
