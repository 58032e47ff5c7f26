{#
    Arguments are data, not SQL: every value an operation receives from --args is
    checked here first, with an error that says what was wrong and what is allowed.
    Nothing has run when these raise, so a bad argument changes nothing.
#}

{#- What a subject id may look like unless var subject_id_pattern says otherwise; the
    Python jobs render this macro too (python_jobs/request_states.py). -#}
{% macro default_subject_id_pattern() -%}
    {{ return(adapter.dispatch('default_subject_id_pattern', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__default_subject_id_pattern() -%}
^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$
{%- endmacro %}

{#- A list of subject ids: 1..var erasure_max_subjects (10,000) strings matching var
    subject_id_pattern (default: a letter or digit, then letters, digits, _ or -, 64
    characters at most). Returns them deduplicated, in order. -#}
{% macro _validate_subject_ids(subject_ids, argument='subject_ids') -%}
    {%- set pattern = var('subject_id_pattern', gdpr_lakehouse.default_subject_id_pattern()) -%}
    {%- set limit = var('erasure_max_subjects', 10000) | int -%}
    {%- set usage = " (e.g. --args '{" ~ argument ~ ": [\"P0000123\", \"U0000042\"]}')" -%}
    {%- if subject_ids is none or subject_ids is string or subject_ids is mapping or subject_ids is not iterable -%}
        {%- do exceptions.raise_compiler_error(argument ~ " must be a list of subject ids" ~ usage ~ "; got " ~ (subject_ids | string)[:80]) -%}
    {%- endif -%}
    {%- if subject_ids | length == 0 -%}
        {%- do exceptions.raise_compiler_error(argument ~ " is empty; give 1 to " ~ limit ~ " subject ids" ~ usage) -%}
    {%- endif -%}
    {%- if subject_ids | length > limit -%}
        {%- do exceptions.raise_compiler_error(argument ~ " has " ~ subject_ids | length ~ " ids; at most " ~ limit
            ~ " per call (var erasure_max_subjects)") -%}
    {%- endif -%}
    {%- set ids = [] -%}
    {%- for subject_id in subject_ids -%}
        {%- if subject_id is not string -%}
            {%- do exceptions.raise_compiler_error(argument ~ "[" ~ loop.index0 ~ "] is " ~ (subject_id | string)[:80]
                ~ ", not a string; quote ids in --args" ~ usage) -%}
        {%- endif -%}
        {%- if subject_id.startswith('__') -%}
            {%- do exceptions.raise_compiler_error(argument ~ "[" ~ loop.index0 ~ "] \"" ~ subject_id[:80] ~ "\" is reserved for the lakehouse's own keys "
                ~ "(ids that start with __), whatever var subject_id_pattern allows; it is not a data subject") -%}
        {%- endif -%}
        {%- if not modules.re.match(pattern, subject_id) or subject_id != subject_id | trim -%}
            {%- do exceptions.raise_compiler_error(argument ~ "[" ~ loop.index0 ~ "] \"" ~ (subject_id[:80] | replace('\n', '\\n') | replace('\r', '\\r')) ~ "\""
                ~ " is not a subject id: allowed are letters, digits, _ and - (a letter or digit first, 64 characters at most; var subject_id_pattern)") -%}
        {%- endif -%}
        {%- if subject_id not in ids -%}{%- do ids.append(subject_id) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(ids) }}
{%- endmacro %}

{#- Free text (reason, requested_by): 1..max_length printable characters, unicode and
    quotes welcome ("patient's letter"); no control characters or backslashes, and no
    `${` (Spark substitutes ${env:NAME} and ${conf} in SQL text: the stored row would
    hold the engine's secret). It reaches SQL only through _sql_string, which escapes
    quotes. -#}
{% macro _validate_text(value, argument, default=none, max_length=300) -%}
    {%- if value is none -%}{{ return(default) }}{%- endif -%}
    {%- if value is not string
          or not modules.re.match('^[^\\x00-\\x1f\\x7f\\\\]{1,' ~ max_length ~ '}$', value)
          or value | trim == '' or '${' in value -%}
        {%- do exceptions.raise_compiler_error(argument ~ " " ~ (value | tojson)[:80] ~ " is not allowed: give text of 1 to "
            ~ max_length ~ " characters without backslashes, control characters (line breaks, tabs) or ${") -%}
    {%- endif -%}
    {{ return(value | trim) }}
{%- endmacro %}

{% macro _validate_flag(value, argument) -%}
    {%- if value is not sameas true and value is not sameas false -%}
        {%- do exceptions.raise_compiler_error(argument ~ " must be true or false; got " ~ (value | tojson)[:40]) -%}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}

{#- A SQL string literal of a value already validated to hold no quote or backslash. -#}
{% macro _sql_string(value) -%}
    {%- if value is none -%}null{%- else -%}'{{ value | replace("\\", "\\\\") | replace("'", "\\'") }}'{%- endif -%}
{%- endmacro %}

{% macro _actor() -%}
    {{ return(env_var('LAKEHOUSE_ACTOR', env_var('USER', env_var('LOGNAME', 'unknown')))) }}
{%- endmacro %}

{#- The privacy control tables an operation needs, or a clear error when the project
    has not been built yet. -#}
{% macro _control_relation(model_name, columns=none) -%}
    {%- set node = gdpr_lakehouse.engine_node(model_name) -%}
    {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
    {%- if relation is none -%}
        {%- do exceptions.raise_compiler_error(node.schema ~ "." ~ node.alias ~ " does not exist yet; run `dbt build` (or `dbt run --select "
            ~ model_name ~ "`) first") -%}
    {%- endif -%}
    {#- columns a newer version of the engine added: the table gets them from its model's
        next run (on_schema_change: append_new_columns), not before -#}
    {%- if columns -%}
        {%- set present = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
        {%- set missing = columns | reject('in', present) | list -%}
        {%- if missing -%}
            {%- do exceptions.raise_compiler_error(node.schema ~ "." ~ node.alias ~ " has no column " ~ missing | join(', ')
                ~ " yet (added by this version); run `dbt run --select " ~ model_name ~ "` (or `dbt build`) first. Nothing was changed") -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}

{#- run-operation passes every --args key as a keyword; a macro that reads `kwargs`
    collects the unknown ones, and this turns them into a clear error. -#}
{% macro _reject_unknown_args(operation, extra, allowed) -%}
    {%- if extra -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": unknown argument(s) " ~ (extra.keys() | list | join(', '))[:200]
            ~ "; allowed: " ~ allowed | join(', ')) -%}
    {%- endif -%}
{%- endmacro %}

{#- A var that is a switch: true, false, or none when unset. Only the YAML booleans are
    accepted: a quoted "false" is truthy in Jinja and would turn a switch on. -#}
{% macro _flag_var(name, default=none) -%}
    {%- set value = var(name, none) -%}
    {%- if value is none -%}
        {{ return(default) }}
    {%- elif value is not sameas true and value is not sameas false -%}
        {%- do exceptions.raise_compiler_error("var " ~ name ~ " is " ~ (value | tojson)[:40] ~ "; it must be true or false (unquoted)") -%}
    {%- else -%}
        {{ return(value) }}
    {%- endif -%}
{%- endmacro %}

{#- A whole number argument within bounds (ints, or strings of digits). -#}
{% macro _validate_whole(value, argument, minimum, maximum) -%}
    {%- if value is string and modules.re.match('^[0-9]{1,12}$', value) -%}
        {%- set value = value | int -%}
    {%- endif -%}
    {%- if value is not number or value is sameas true or value is sameas false or value != value | int
          or value < minimum or value > maximum -%}
        {%- do exceptions.raise_compiler_error(argument ~ " must be a whole number from " ~ minimum ~ " to " ~ maximum
            ~ "; got " ~ (value | tojson)[:40]) -%}
    {%- endif -%}
    {{ return(value | int) }}
{%- endmacro %}

{#- A moment a person gives (received_at): "YYYY-MM-DD" or "YYYY-MM-DD HH:MM[:SS]", in
    UTC unless it ends with Z or an offset such as +01:00; a day the calendar has, not
    after this run started and not before 2000. Returns it as an aware UTC datetime. -#}
{% macro _validate_moment(value, argument) -%}
    {%- set usage = "; give \"YYYY-MM-DD\" or \"YYYY-MM-DD HH:MM:SS\" (UTC, or with Z or an offset such as +01:00)" -%}
    {%- set parts = modules.re.match('^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[ T]([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?)?(Z|[+-][0-9]{2}:[0-9]{2})?$', value) if value is string else none -%}
    {%- if not parts -%}
        {%- do exceptions.raise_compiler_error(argument ~ " " ~ (value | tojson)[:60] ~ " is not a date or a time" ~ usage) -%}
    {%- endif -%}
    {%- set year, month, day = parts.group(1) | int, parts.group(2) | int, parts.group(3) | int -%}
    {%- set hour, minute, second = (parts.group(4) or '0') | int, (parts.group(5) or '0') | int, (parts.group(6) or '0') | int -%}
    {%- if year < 2000 or month < 1 or month > 12 or day < 1 or day > gdpr_lakehouse._days_in_month(year, month)
          or hour > 23 or minute > 59 or second > 59 -%}
        {%- do exceptions.raise_compiler_error(argument ~ " \"" ~ value ~ "\" is not a valid date and time from the year 2000 on" ~ usage) -%}
    {%- endif -%}
    {%- set zone = parts.group(7) or 'Z' -%}
    {%- if zone != 'Z' and ((zone[1:3] | int) > 14 or (zone[4:6] | int) > 59) -%}
        {%- do exceptions.raise_compiler_error(argument ~ " \"" ~ value ~ "\" has no such UTC offset (-14:00 to +14:00)" ~ usage) -%}
    {%- endif -%}
    {%- set offset = 0 if zone == 'Z' else ((zone[1:3] | int) * 60 + (zone[4:6] | int)) * (-1 if zone[0] == '-' else 1) -%}
    {%- set utc = modules.pytz.utc -%}
    {%- set moment = (modules.datetime.datetime(year, month, day, hour, minute, second, tzinfo=utc) - modules.datetime.timedelta(minutes=offset)) -%}
    {%- if moment > run_started_at.astimezone(utc) -%}
        {%- do exceptions.raise_compiler_error(argument ~ " \"" ~ value ~ "\" is in the future (now: "
            ~ run_started_at.astimezone(utc).strftime('%Y-%m-%d %H:%M:%S') ~ " UTC)") -%}
    {%- endif -%}
    {{ return(moment) }}
{%- endmacro %}

{#- How many days the month has (1-12) in the Gregorian calendar: the one rule the
    argument checks and the law's clock share. -#}
{% macro _days_in_month(year, month) -%}
    {%- set leap = (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 -%}
    {{ return([31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]) }}
{%- endmacro %}

{#- A calendar day a person gives ("YYYY-MM-DD", a day the calendar has, from 2000 on):
    `after_today` true, a day after today (UTC: a review date); false, not after today
    (a date something happened: the subject was told); none, either (its caller bounds
    it). Returns the text; none stays none. -#}
{% macro _validate_day(value, argument, after_today) -%}
    {%- if value is none -%}{{ return(none) }}{%- endif -%}
    {%- set parts = modules.re.match('^([0-9]{4})-([0-9]{2})-([0-9]{2})$', value) if value is string else none -%}
    {%- set usage = "; give a day as \"YYYY-MM-DD\"" -%}
    {%- if not parts -%}
        {%- do exceptions.raise_compiler_error(argument ~ " " ~ (value | tojson)[:60] ~ " is not a date" ~ usage) -%}
    {%- endif -%}
    {%- set year, month, day = parts.group(1) | int, parts.group(2) | int, parts.group(3) | int -%}
    {%- if year < 2000 or month < 1 or month > 12 or day < 1 or day > gdpr_lakehouse._days_in_month(year, month) -%}
        {%- do exceptions.raise_compiler_error(argument ~ " \"" ~ value ~ "\" is not a day of the calendar from the year 2000 on" ~ usage) -%}
    {%- endif -%}
    {%- set today = run_started_at.astimezone(modules.pytz.utc).strftime('%Y-%m-%d') -%}
    {%- if after_today is sameas true and value <= today -%}
        {%- do exceptions.raise_compiler_error(argument ~ " \"" ~ value ~ "\" must be after today (" ~ today ~ " UTC)") -%}
    {%- elif after_today is sameas false and value > today -%}
        {%- do exceptions.raise_compiler_error(argument ~ " \"" ~ value ~ "\" is in the future (today: " ~ today ~ " UTC)") -%}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}
