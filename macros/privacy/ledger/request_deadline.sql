{#
    The law's clock (GDPR Art. 12(3)): a request is answered within one month of its
    receipt, a period that may be extended by two further months where necessary. A
    month is a calendar month (Regulation (EEC, Euratom) No 1182/71, Art. 3(2)(c)):
    received on 10 February, due by the end of 10 March; received on 31 January, due by
    the end of 28 February (29 in a leap year), the month having no 31st. Var
    request_deadline sets the period: '1 month' (the default, GDPR) or a number of days
    ('45 days': CCPA). The deadline is the end of that day, UTC, counted from the UTC
    date of receipt. It is not moved past a weekend or a public holiday, which the
    controller's own calendar decides: the engine is never later than the law.
#}
{% macro request_deadline(received, extension=0) -%}
    {{ return(adapter.dispatch('request_deadline', 'gdpr_lakehouse')(received, extension)) }}
{%- endmacro %}

{#- received: a datetime (UTC) or a 'YYYY-MM-DD' date; extension: further months (or
    days) granted, in the policy's unit. Returns the deadline as 'YYYY-MM-DD 23:59:59'
    (UTC). -#}
{% macro spark__request_deadline(received, extension) -%}
    {%- set policy = gdpr_lakehouse._request_deadline_policy() -%}
    {%- set day = modules.datetime.date.fromisoformat(received[:10]) if received is string else modules.datetime.date(received.year, received.month, received.day) -%}
    {%- set count = policy.count + (extension | int) -%}
    {%- if policy.unit == 'day' -%}
        {%- set due = day + modules.datetime.timedelta(days=count) -%}
    {%- else -%}
        {%- set months = day.year * 12 + day.month - 1 + count -%}
        {%- set year = months // 12 -%}
        {%- set month = months % 12 + 1 -%}
        {%- set due = modules.datetime.date(year, month, [day.day, gdpr_lakehouse._days_in_month(year, month)] | min) -%}
    {%- endif -%}
    {{ return(due.isoformat() ~ ' 23:59:59') }}
{%- endmacro %}

{#- Var request_deadline parsed: {count, unit: 'month' | 'day', most: the longest
    period an extension may reach (3 months: Art. 12(3)'s one plus two further; or
    90 days), days: the period in days for a retention to fit in (30 a month)}. A var
    the engine no longer reads stops the run instead of being ignored. -#}
{% macro _request_deadline_policy() -%}
    {%- if var('erasure_deadline_days', none) is not none -%}
        {%- do exceptions.raise_compiler_error("var erasure_deadline_days is no longer read: a request's deadline is now var "
            ~ "request_deadline, '1 month' by default (GDPR Art. 12(3) counts calendar months, not 30 days), or a number "
            ~ "of days such as '45 days' (CCPA); replace the var") -%}
    {%- endif -%}
    {%- set value = var('request_deadline', '1 month') -%}
    {%- set parts = modules.re.match('^([0-9]{1,3}) (day|days|month|months)$', value | string) if value is string else none -%}
    {%- set unit = parts.group(2).rstrip('s') if parts else none -%}
    {%- set count = parts.group(1) | int if parts else 0 -%}
    {%- if not parts or count < 1 or (unit == 'month' and count > 3) or (unit == 'day' and count > 90) -%}
        {%- do exceptions.raise_compiler_error("var request_deadline is " ~ (value | tojson)[:40] ~ "; it must be \"N month(s)\" "
            ~ "with N from 1 to 3 (GDPR: '1 month') or \"N day(s)\" with N from 1 to 90 (CCPA: '45 days')") -%}
    {%- endif -%}
    {{ return({'count': count, 'unit': unit, 'most': 3 if unit == 'month' else 90,
               'days': count * 30 if unit == 'month' else count}) }}
{%- endmacro %}
