{#
    on-run-start: every var that reaches DDL or weakens erasure is checked before any
    model runs. A bad value stops the run with a message that says what is allowed, and
    changes nothing.
    - delta_log_retention / delta_deleted_file_retention reach every table's
      tblproperties (quoted by dbt-spark, not escaped): 'interval <n> hours|days|weeks'.
      Deleted files kept under Delta's 7-day floor (168 h) would make every post-build
      VACUUM a short one: only with the explicit opt-in var vacuum_allow_short_retention.
      Log retention under one day would drop versions before the audit stream reads them.
    - the switches (key_envelope, vacuum_on_build, vacuum_allow_short_retention): true
      or false, never text ("false" is truthy).
    - lake_root reaches each table's LOCATION: an absolute path or a storage URI, with no
      quote, space or backslash.
    The key mode is checked by the next hook (privacy/crypto.sql, assert_key_envelope).
#}
{% macro validate_retention_vars() -%}
    {{ return(adapter.dispatch('validate_retention_vars', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__validate_retention_vars() -%}
    {%- for name in ['key_envelope', 'vacuum_on_build', 'vacuum_allow_short_retention'] -%}
        {%- do gdpr_lakehouse._flag_var(name) -%}
    {%- endfor -%}
    {%- set pattern = '^interval [1-9][0-9]{0,4} (hours|days|weeks)$' -%}
    {%- set floors = {'delta_log_retention': 24, 'delta_deleted_file_retention': 168} -%}
    {%- for name, default in [('delta_log_retention', 'interval 30 days'),
                              ('delta_deleted_file_retention', 'interval 7 days')] -%}
        {%- set value = var(name, default) | string -%}
        {%- if not modules.re.match(pattern, value) -%}
            {%- do exceptions.raise_compiler_error(
                "var " ~ name ~ " = " ~ value[:60] ~ " is not a retention Delta accepts here; "
                ~ "use 'interval <n> hours|days|weeks', e.g. '" ~ default ~ "'") -%}
        {%- endif -%}
        {%- set hours = gdpr_lakehouse._retention_hours(value) -%}
        {%- if name == 'delta_log_retention' and hours < floors[name] -%}
            {%- do exceptions.raise_compiler_error("var delta_log_retention = " ~ value ~ " is under one day: the table history "
                ~ "(restore, audit stream) would lose versions before they are read; use at least 'interval 1 days'") -%}
        {%- endif -%}
        {%- if name == 'delta_deleted_file_retention' and hours < floors[name]
              and not gdpr_lakehouse._flag_var('vacuum_allow_short_retention', false) -%}
            {%- do exceptions.raise_compiler_error("var delta_deleted_file_retention = " ~ value ~ " is below Delta's 7-day (168 h) "
                ~ "safety floor: every post-build VACUUM would delete files a running reader or writer may still need. "
                ~ "Opt in with --vars '{vacuum_allow_short_retention: true}' if none can be running") -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set root = var('lake_root', '') -%}
    {%- if root and (root is not string or not modules.re.match('^(/|[a-z][a-z0-9+.-]*://)[A-Za-z0-9_./@:=+-]{1,400}$', root)) -%}
        {%- do exceptions.raise_compiler_error("var lake_root = " ~ (root | tojson)[:80] ~ " is not allowed: give an absolute path or a "
            ~ "storage URI (abfss://container@account.dfs.core.windows.net/path) of letters, digits and _ . / @ : = + -") -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
