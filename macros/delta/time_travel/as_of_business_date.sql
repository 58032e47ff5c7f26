{#
    dbt run-operation as_of_business_date --args '{model: silver_patients, date: 2026-01-05}'

    The Delta version of a model, snapshot or seed that closed business day `date`
    (macro business_date: every build tags its commits with the day it closes): the
    newest version whose tag closes that day or an earlier one. Prints it and returns
    the version; macro `as_of` (privacy/restore) reads it in a model, leaving out the
    subjects erased since. Refused, with nothing read: the key vault and the privacy control
    tables (their old versions hold keys since shredded and ids since forgotten), a day
    no version closes (before the first build that carried a business date), a version
    time travel cannot reach any more (its files vacuumed or past the table's
    deleted-file retention). A version that also holds a later day's changes (a build
    with an earlier business_date ran after a later day closed: late data) is said so.
#}
{% macro as_of_business_date(model=none, date=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('as_of_business_date', kwargs, ['model', 'date']) -%}
    {{ return(adapter.dispatch('as_of_business_date', 'gdpr_lakehouse')(model, date)) }}
{%- endmacro %}

{% macro spark__as_of_business_date(model, date) -%}
    {%- set found = gdpr_lakehouse._business_version_of(model, date, 'as_of_business_date') -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- do print(found.relation ~ " as of business day " ~ found.day ~ ": version " ~ found.version
        ~ " (committed " ~ found.timestamp_text ~ " UTC by the build that closed " ~ found.business_date ~ ")") -%}
    {%- if found.later -%}
        {%- do print("  note: it also holds the changes of business day(s) " ~ found.later | join(', ')
            ~ ", closed by older versions: a build tagged " ~ found.business_date ~ " ran after them (late data)") -%}
    {%- endif -%}
    {{ return(found.version) }}
{%- endmacro %}

{#- The node, relation and version that closed business day `date` of the model named
    `model`, with the checks as_of_business_date states; a clear error otherwise. -#}
{% macro _business_version_of(model, date, operation) -%}
    {%- set node = gdpr_lakehouse._delta_node(model, operation, resource_types=('model', 'snapshot', 'seed')) -%}
    {%- if date is none -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": date is required (the business day, YYYY-MM-DD), e.g. --args '{model: "
            ~ model ~ ", date: 2026-01-05}'") -%}
    {%- endif -%}
    {%- set day = gdpr_lakehouse._business_day(date, operation ~ ": date") -%}
    {%- set role = ((node.config.get('meta') or {}).get('privacy') or {}).get('role') -%}
    {%- if role in ('vault', 'control', 'system') -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ model ~ " is " ~ ('the key vault' if role == 'vault'
            else 'the system key table' if role == 'system' else 'a privacy control table')
            ~ ": its old versions hold keys since shredded or ids since forgotten, and are never read by business day") -%}
    {%- endif -%}
    {%- if not execute -%}{{ return({}) }}{%- endif -%}
    {%- set relation = gdpr_lakehouse._delta_relation_of(node, operation) -%}
    {%- set history = gdpr_lakehouse.delta_history(relation) -%}
    {%- set found = gdpr_lakehouse._business_version(history, day) -%}
    {%- if found is none -%}
        {%- set tagged = [] -%}
        {%- for commit in history -%}
            {%- set tag = gdpr_lakehouse._business_date_of(commit) -%}
            {%- if tag is not none -%}{%- do tagged.append(tag) -%}{%- endif -%}
        {%- endfor -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ relation ~ " has no business day closed on or before " ~ day
            ~ ((": the first it closed is " ~ (tagged | min) ~ ", the last " ~ (tagged | max)) if tagged
               else ": none of its " ~ history | length ~ " versions was built with a business date (built before this version of gdpr_lakehouse?)")) -%}
    {%- endif -%}
    {%- set vacuumed = gdpr_lakehouse._oldest_restorable(history) -%}
    {%- set window = gdpr_lakehouse._time_travel_floor(relation, history) -%}
    {%- if found.version < vacuumed or found.version < window.version -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ relation ~ " version " ~ found.version ~ " closed business day "
            ~ found.business_date ~ ", but time travel reaches back only to version " ~ ([vacuumed, window.version] | max)
            ~ (" (VACUUM deleted the files older versions need)" if found.version < vacuumed
               else " (its files are past the table's delta.deletedFileRetentionDuration, " ~ window.text ~ ", and VACUUM may delete them)")) -%}
    {%- endif -%}
    {%- do found.update({'node': node, 'relation': relation, 'day': day}) -%}
    {{ return(found) }}
{%- endmacro %}
