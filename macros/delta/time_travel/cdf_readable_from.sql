{# How far back a table's versions and Change Data Feed can still be read. #}

{#- The oldest version whose Change Data Feed can still be read: VACUUM deletes the
    change files (and removed data files) of every commit older than its cutoff, so a
    consumer that fell behind past a VACUUM must recount. -1 when nothing runs. -#}
{% macro cdf_readable_from(relation) -%}
    {{ return(adapter.dispatch('cdf_readable_from', 'gdpr_lakehouse')(relation)) }}
{%- endmacro %}

{% macro spark__cdf_readable_from(relation) -%}
    {%- if not execute -%}{{ return(-1) }}{%- endif -%}
    {%- set history = gdpr_lakehouse.delta_history(relation) -%}
    {{ return([gdpr_lakehouse._cdf_readable_from_history(history), gdpr_lakehouse._time_travel_floor(relation, history).version] | max) }}
{%- endmacro %}

{#- Delta 4.1 on (delta-io/delta#5022) refuses time travel (SELECT ... VERSION AS OF,
    RESTORE, CLONE, a change feed's starting version) to a version whose commit is older
    than the table's delta.deletedFileRetentionDuration; the newest version is always
    reachable. {version: the oldest version inside that window, hours: the retention,
    text: the retention as the table property says it}.
    A version that leaves the window within the next 10 minutes counts as gone, so an
    operation planned on it cannot fail halfway. -#}
{% macro _time_travel_floor(relation, history) -%}
    {%- set text = gdpr_lakehouse.tblproperties_of(relation).get('delta.deletedFileRetentionDuration') -%}
    {%- set hours = gdpr_lakehouse._retention_hours(text) if text is not none else 168 -%}
    {%- if hours is none -%}
        {%- do exceptions.raise_compiler_error(relation ~ ": delta.deletedFileRetentionDuration is " ~ text ~ ", not an interval Delta reads") -%}
    {%- endif -%}
    {%- set now = run_query('select current_timestamp()').rows[0][0] -%}
    {%- set floor = gdpr_lakehouse._time_travel_floor_of(history, hours, now) -%}
    {%- do floor.update({'text': text or 'interval 7 days'}) -%}
    {{ return(floor) }}
{%- endmacro %}

{% macro _time_travel_floor_of(history, hours, now) -%}
    {%- set cutoff = now - modules.datetime.timedelta(hours=hours) + modules.datetime.timedelta(minutes=10) -%}
    {%- set latest = (history | map(attribute='version') | max) if history else 0 -%}
    {%- set inside = history | selectattr('timestamp', 'ge', cutoff) | map(attribute='version') | list -%}
    {{ return({'version': (inside | min) if inside else latest, 'hours': hours | round(2)}) }}
{%- endmacro %}

{% macro _cdf_readable_from_history(history) -%}
    {%- set ns = namespace(first=(history | map(attribute='version') | min) if history else 0) -%}
    {%- for vacuum in history if vacuum.operation == 'VACUUM START' -%}
        {%- set cutoff = vacuum.timestamp - modules.datetime.timedelta(milliseconds=gdpr_lakehouse._vacuum_retention_millis(vacuum)) -%}
        {%- for commit in history if commit.version < vacuum.version and commit.version >= ns.first and commit.timestamp <= cutoff -%}
            {%- set ns.first = commit.version + 1 -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(ns.first) }}
{%- endmacro %}
