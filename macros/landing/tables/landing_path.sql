{# Where the landing zone is: var landing_path, default $LAKEHOUSE_DIR/landing. #}
{% macro landing_path() -%}
    {{ return(adapter.dispatch('landing_path', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__landing_path() -%}
    {%- set path = var('landing_path', env_var('LAKEHOUSE_DIR', '.lakehouse') ~ '/landing') | string -%}
    {%- if not modules.re.match('^[A-Za-z0-9_./:@+-]+$', path) -%}
        {%- do exceptions.raise_compiler_error("landing_path " ~ path[:80]
            ~ " may only contain letters, digits and _ . / : @ + -") -%}
    {%- endif -%}
    {{ return(path.rstrip('/')) }}
{%- endmacro %}
