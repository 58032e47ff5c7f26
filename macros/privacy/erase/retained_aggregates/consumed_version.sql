{#- The upstream version an incremental CDF consumer has consumed (its source_version
    column), or -1 on its first run or while its table predates that column. -#}
{% macro consumed_version(relation) -%}
    {{ return(adapter.dispatch('consumed_version', 'gdpr_lakehouse')(relation)) }}
{%- endmacro %}

{% macro spark__consumed_version(relation) -%}
    {%- if not execute or relation is none -%}{{ return(-1) }}{%- endif -%}
    {%- set names = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
    {%- if 'source_version' not in names -%}{{ return(-1) }}{%- endif -%}
    {{ return(gdpr_lakehouse.scalar_query('select coalesce(max(source_version), -1) from ' ~ relation, -1) | int) }}
{%- endmacro %}
