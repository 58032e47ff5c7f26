{#- The purge deadline of a request erased at `erased_at` (a column or expression). -#}
{% macro purge_deadline_of(erased_at) -%}
    {{ return(adapter.dispatch('purge_deadline_of', 'gdpr_lakehouse')(erased_at)) }}
{%- endmacro %}

{% macro spark__purge_deadline_of(erased_at) -%}
{{ return(erased_at ~ " + make_interval(0, 0, 0, " ~ gdpr_lakehouse.purge_deadline_days() ~ ")") }}
{%- endmacro %}
