{#
    on-run-start: the retention vars reach every table's tblproperties (quoted by
    dbt-spark, not escaped), so check their shape before any model runs. A bad value
    stops the run with a message and changes nothing.
#}
{% macro validate_retention_vars() -%}
    {%- set pattern = '^interval [1-9][0-9]{0,4} (hours|days|weeks)$' -%}
    {%- for name, default in [('delta_log_retention', 'interval 30 days'),
                              ('delta_deleted_file_retention', 'interval 7 days')] -%}
        {%- set value = var(name, default) | string -%}
        {%- if not modules.re.match(pattern, value) -%}
            {%- do exceptions.raise_compiler_error(
                "var " ~ name ~ " = " ~ value[:60] ~ " is not a retention Delta accepts here; "
                ~ "use 'interval <n> hours|days|weeks', e.g. '" ~ default ~ "'") -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return('') }}
{%- endmacro %}
