{% macro delta_relations_from_graph() -%}
    {{ return(adapter.dispatch('delta_relations_from_graph', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__delta_relations_from_graph() -%}
    {%- set relations = [] -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes() -%}
        {%- do relations.append(api.Relation.create(schema=node.schema, identifier=node.alias)) -%}
    {%- endfor -%}
    {{ return(relations) }}
{%- endmacro %}
