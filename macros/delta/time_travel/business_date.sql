{#
    The business period a build closes (shared reference 004, G-SCD): var business_date
    ("YYYY-MM-DD"), default the day the run started (UTC). Every commit a build, seed or
    snapshot makes carries it in its tag (set_commit_metadata), so a business day maps
    to the Delta version that closed it (as_of_business_date, as_of) without SCD2
    columns or a copy per day. Given by hand it must be a day of the calendar from 2000
    on and at most 7 days after today (UTC): a typo such as 2062 is refused before it
    tags anything. Returns the day as text.
#}
{% macro business_date() -%}
    {{ return(adapter.dispatch('business_date', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__business_date() -%}
    {%- set today = run_started_at.astimezone(modules.pytz.utc) -%}
    {%- set value = var('business_date', none) -%}
    {%- if value is none -%}
        {{ return(today.strftime('%Y-%m-%d')) }}
    {%- endif -%}
    {%- set day = gdpr_lakehouse._business_day(value, 'var business_date') -%}
    {%- set latest = (today + modules.datetime.timedelta(days=7)).strftime('%Y-%m-%d') -%}
    {%- if day > latest -%}
        {%- do exceptions.raise_compiler_error("var business_date \"" ~ day ~ "\" is more than 7 days after today ("
            ~ today.strftime('%Y-%m-%d') ~ " UTC): a build closes a period that has begun; give a day up to " ~ latest) -%}
    {%- endif -%}
    {{ return(day) }}
{%- endmacro %}

{#- A business day given as "YYYY-MM-DD" (YAML may hand it over as a date): the day
    as text once macro _validate_day accepts it (a day of the calendar from 2000 on). -#}
{% macro _business_day(value, argument) -%}
    {%- if value is not string and value is not none and value.isoformat is defined and value.year is defined
          and value.hour is not defined -%}
        {%- set value = value.isoformat() -%}
    {%- endif -%}
    {{ return(gdpr_lakehouse._validate_day(value, argument, none)) }}
{%- endmacro %}

{#- The business day a commit closed: its tag's business_date when it is a day, else none. -#}
{% macro _business_date_of(commit) -%}
    {%- set day = (commit.tag or {}).get('business_date') -%}
    {{ return(day if day is string and modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2}$', day) else none) }}
{%- endmacro %}

{#- The version that closed business day `day`, from a history (newest first): the
    newest version whose tag closes `day` or an earlier day. A day no build was tagged
    with reads the last one before it (nothing changed that day); a period closed again
    (a second build that day, or late data of that day built later with the same
    business_date) maps to the newer version. Returns {version, business_date,
    timestamp_text, later: [business days tagged on older versions after `day`]}
    (non-empty when a build tagged with an earlier day ran after a later day had
    closed: the version also holds that later period's changes), or none when no
    version closes `day` or an earlier one. -#}
{% macro _business_version(history, day) -%}
    {%- set closed = [] -%}
    {%- for commit in history -%}
        {%- set tagged = gdpr_lakehouse._business_date_of(commit) -%}
        {%- if tagged is not none and tagged <= day -%}{%- do closed.append(commit) -%}{%- endif -%}
    {%- endfor -%}
    {%- if not closed -%}{{ return(none) }}{%- endif -%}
    {%- set chosen = closed | sort(attribute='version', reverse=true) | first -%}
    {%- set later = [] -%}
    {%- for commit in history if commit.version < chosen.version -%}
        {%- set tagged = gdpr_lakehouse._business_date_of(commit) -%}
        {%- if tagged is not none and tagged > day and tagged not in later -%}{%- do later.append(tagged) -%}{%- endif -%}
    {%- endfor -%}
    {{ return({'version': chosen.version, 'business_date': gdpr_lakehouse._business_date_of(chosen),
               'timestamp_text': chosen.timestamp_text, 'later': later | sort}) }}
{%- endmacro %}
