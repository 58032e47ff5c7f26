{#- A group of states as a SQL list: ('pending', 'erasing', 'failed'). -#}
{% macro request_status_in(group) -%}
    {{ return(adapter.dispatch('request_status_in', 'gdpr_lakehouse')(group)) }}
{%- endmacro %}

{% macro spark__request_status_in(group) -%}
    {%- set states = gdpr_lakehouse.request_states() -%}
    {%- if group not in states or group == 'states' -%}
        {%- do exceptions.raise_compiler_error("request_status_in: no group " ~ group ~ "; groups: open, unfinished, begun, fulfilled") -%}
    {%- endif -%}
    {{ return("('" ~ states[group] | join("', '") ~ "')") }}
{%- endmacro %}
