{#
    VACUUM a Delta relation, logged; the number of files it deleted. retain_hours
    none: the table's own delta.deletedFileRetentionDuration (the policy set from
    vars); else a whole number of hours, never rounded. Below Delta's 7-day safety
    check only with the explicit opt-in var vacuum_allow_short_retention: true (a
    shorter window can break readers and writers that run at the same time and
    shortens how far RESTORE reaches). The one VACUUM of the project: the post-hook
    and python -m python_jobs.purge (python_jobs.macros.on_session) both run it.
#}
{% macro vacuum_relation(relation, retain_hours=none, lite=false) -%}
    {{ return(adapter.dispatch('vacuum_relation', 'gdpr_lakehouse')(relation, retain_hours, lite)) }}
{%- endmacro %}

{% macro spark__vacuum_relation(relation, retain_hours=none, lite=false) -%}
    {%- set short = false -%}
    {%- if retain_hours is not none -%}
        {%- if retain_hours is not number or retain_hours is sameas true or retain_hours is sameas false
              or retain_hours != (retain_hours | int) or retain_hours < 0 or retain_hours > 87600 -%}
            {%- do exceptions.raise_compiler_error("vacuum retain_hours is " ~ (retain_hours | string)[:40] ~ "; it must be a whole number of hours from 0 to 87600") -%}
        {%- endif -%}
        {%- set short = retain_hours < 168 -%}
        {%- if short and not gdpr_lakehouse._flag_var('vacuum_allow_short_retention', false) -%}
            {%- do exceptions.raise_compiler_error("vacuum retain_hours " ~ retain_hours ~ " is below Delta's 7-day (168 h) safety check; "
                ~ "opt in with --vars '{vacuum_allow_short_retention: true}' if no reader or writer can be running") -%}
        {%- endif -%}
    {%- endif -%}
    {%- set sql = 'vacuum ' ~ relation ~ (' lite' if lite else '') ~ ((' retain ' ~ (retain_hours | int) ~ ' hours') if retain_hours is not none else '') -%}
    {%- if execute -%}
        {#- Delta 4.1+ ignores RETAIN n HOURS unless n is 0 (delta-io/delta#5028) and uses
            the table's delta.deletedFileRetentionDuration: turned off for this statement,
            then checked in the VACUUM START commit, so retain_hours means what it says. -#}
        {%- set honour = retain_hours is not none and (retain_hours | int) != 0 -%}
        {%- set ignore_key = 'spark.databricks.delta.vacuum.retentionWindowIgnore.enabled' -%}
        {%- set before = run_query('describe history ' ~ relation ~ ' limit 1').rows[0]['version'] | int -%}
        {#- Delta's check refuses a retention below the table's own, which may be longer
            than 168 h: lifted for this statement too (the caller asked for the hours). -#}
        {%- if retain_hours is not none and not short -%}
            {%- set shown = run_query("show tblproperties " ~ relation ~ " ('delta.deletedFileRetentionDuration')") -%}
            {%- set table_hours = gdpr_lakehouse._retention_hours(shown.rows[0][-1] if shown.rows else none) -%}
            {%- set short = table_hours is not none and retain_hours < table_hours -%}
        {%- endif -%}
        {%- if short -%}{%- do run_query('set spark.databricks.delta.retentionDurationCheck.enabled = false') -%}{%- endif -%}
        {%- if honour -%}
            {%- do run_query('set ' ~ ignore_key ~ ' = false') -%}
            {%- if (run_query('set ' ~ ignore_key).rows[0][1] | string | lower) != 'false' -%}
                {%- do exceptions.raise_compiler_error("vacuum: this Spark will not let VACUUM honour RETAIN " ~ retain_hours ~ " HOURS ("
                    ~ ignore_key ~ " cannot be set); set the table's delta.deletedFileRetentionDuration instead and leave vacuum_retain_hours unset") -%}
            {%- endif -%}
        {%- endif -%}
        {%- do run_query(sql) -%}
        {%- if honour -%}{%- do run_query('set ' ~ ignore_key ~ ' = true') -%}{%- endif -%}
        {%- if short -%}{%- do run_query('set spark.databricks.delta.retentionDurationCheck.enabled = true') -%}{%- endif -%}
        {%- if honour -%}
            {%- set ns = namespace(used=none) -%}
            {%- for row in run_query('describe history ' ~ relation ~ ' limit 10')
                  if row['operation'] == 'VACUUM START' and (row['version'] | int) > before and ns.used is none -%}
                {%- set ns.used = gdpr_lakehouse._history_metric(row['operationParameters'] | string, 'specifiedRetentionMillis') | int -%}
            {%- endfor -%}
            {%- if ns.used != (retain_hours | int) * 3600000 -%}
                {%- do exceptions.raise_compiler_error("vacuum: VACUUM of " ~ relation ~ " ran with a retention of "
                    ~ ((ns.used / 3600000) ~ ' h' if ns.used else 'the table default') ~ ", not the " ~ retain_hours ~ " h asked for") -%}
            {%- endif -%}
        {%- endif -%}
        {%- set deleted = gdpr_lakehouse._vacuumed_files(relation) -%}
        {%- do log(sql ~ ': ' ~ deleted ~ ' files deleted', info=true) -%}
        {{ return(deleted) }}
    {%- endif -%}
    {{ return(0) }}
{%- endmacro %}

{#- numDeletedFiles of the newest VACUUM END commit. -#}
{% macro _vacuumed_files(relation) -%}
    {%- for row in run_query('describe history ' ~ relation ~ ' limit 5') if row['operation'] == 'VACUUM END' -%}
        {{ return(gdpr_lakehouse._history_metric(row['operationMetrics'] | string, 'numDeletedFiles') | int) }}
    {%- endfor -%}
    {{ return(0) }}
{%- endmacro %}
