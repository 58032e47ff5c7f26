{#- Characters a landing file's path may have: it is written into SQL as a literal. -#}
{% macro landing_path_pattern() -%}
    {{ return(adapter.dispatch('landing_path_pattern', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__landing_path_pattern() -%}
    {{ return('^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9_./:=@+-]+$') }}
{%- endmacro %}
