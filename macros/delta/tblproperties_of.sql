{#- A Delta table's properties (SHOW TBLPROPERTIES) as a dict. -#}
{% macro tblproperties_of(relation) -%}
    {{ return(adapter.dispatch('tblproperties_of', 'gdpr_lakehouse')(relation)) }}
{%- endmacro %}

{% macro spark__tblproperties_of(relation) -%}
    {%- set properties = {} -%}
    {%- for row in run_query('show tblproperties ' ~ relation) -%}
        {%- do properties.update({row[0]: row[1]}) -%}
    {%- endfor -%}
    {{ return(properties) }}
{%- endmacro %}
