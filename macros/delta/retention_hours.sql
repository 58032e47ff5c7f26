{#- Hours of a Delta interval property ('interval 7 days', '1 hours'), or none when it is not one. -#}
{% macro _retention_hours(text) -%}
    {%- set match = modules.re.match('^\\s*(?:interval\\s+)?(\\d+)\\s+(second|minute|hour|day|week)s?\\s*$', (text or '') | string | lower) -%}
    {%- if not match -%}{{ return(none) }}{%- endif -%}
    {%- set per = {'second': 1 / 3600, 'minute': 1 / 60, 'hour': 1, 'day': 24, 'week': 168} -%}
    {{ return((match.group(1) | int) * per[match.group(2)]) }}
{%- endmacro %}
