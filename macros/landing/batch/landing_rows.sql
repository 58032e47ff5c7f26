{#- A landing table's rows, only those of this build's files when batch_only: a
    relation to select from. -#}
{% macro landing_rows(relation, batch_only) -%}
    {{ return(adapter.dispatch('landing_rows', 'gdpr_lakehouse')(relation, batch_only)) }}
{%- endmacro %}

{% macro spark__landing_rows(relation, batch_only) -%}
    {%- if batch_only -%}
        {{ return('(select * from ' ~ relation ~ ' where ' ~ gdpr_lakehouse.landing_batch_predicate(relation.identifier) ~ ')') }}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}
