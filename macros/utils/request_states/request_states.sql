{% macro request_states() -%}
    {{ return(adapter.dispatch('request_states', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__request_states() -%}
    {{ return(fromjson(gdpr_lakehouse.request_states_json())) }}
{%- endmacro %}
