{#
    The newest version of a Delta table (DESCRIBE HISTORY ... LIMIT 1), or -1 when
    nothing runs (parsing) or the relation has no history yet.
#}
{% macro latest_delta_version(relation) -%}
    {{ return(adapter.dispatch('latest_delta_version', 'gdpr_lakehouse')(relation)) }}
{%- endmacro %}

{% macro spark__latest_delta_version(relation) -%}
    {{ return(gdpr_lakehouse.scalar_query('describe history ' ~ relation ~ ' limit 1', -1) | int) }}
{%- endmacro %}
