{#- The subject types the vault keys: those of subject_feeds(), sorted. -#}
{% macro subject_types() -%}
    {{ return(adapter.dispatch('subject_types', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__subject_types() -%}
    {{ return(gdpr_lakehouse.subject_feeds() | map(attribute='subject_type') | unique | sort | list) }}
{%- endmacro %}
