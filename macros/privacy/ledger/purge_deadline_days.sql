{#
    The purge clock. An erased request has its rows gone from every current version;
    the old files that still hold them go only when `python -m python_jobs.purge` has
    run REORG PURGE and a VACUUM at least one deleted-file retention after the erasure.
    Each erased request has a purge deadline, erased_at + var purge_deadline_days
    (default 8: Delta's 7-day retention, the earliest the files can go, plus a day for
    a daily purge job). A deadline shorter than the retention could never be met, so
    it is refused. The report (python -m python_jobs.report) and the compliance test
    no_overdue_purge alert on an erased request past it.
#}
{% macro purge_deadline_days() -%}
    {{ return(adapter.dispatch('purge_deadline_days', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__purge_deadline_days() -%}
    {%- set days = var('purge_deadline_days', 8) -%}
    {%- if days is not number or days is sameas true or days is sameas false or days != days | int or days < 1 or days > 90 -%}
        {%- do exceptions.raise_compiler_error("var purge_deadline_days is " ~ (days | string)[:40]
            ~ "; it must be a whole number of days from 1 to 90 (default 8)") -%}
    {%- endif -%}
    {%- set retention = var('delta_deleted_file_retention', 'interval 7 days') | string -%}
    {%- set hours = gdpr_lakehouse._retention_hours(retention) -%}
    {%- if hours is none or days * 24 < hours -%}
        {%- do exceptions.raise_compiler_error("var purge_deadline_days = " ~ days ~ " is shorter than var delta_deleted_file_retention = "
            ~ retention[:40] ~ ": VACUUM cannot delete the files an erasure removed before that retention has passed, "
            ~ "so the deadline could never be met; use at least " ~ (((hours or 168) / 24) | round(0, 'ceil') | int) ~ " days") -%}
    {%- endif -%}
    {{ return(days | int) }}
{%- endmacro %}
