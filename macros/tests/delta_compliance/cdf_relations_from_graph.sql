{% macro cdf_relations_from_graph() -%}
    {{ return(adapter.dispatch('cdf_relations_from_graph', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__cdf_relations_from_graph() -%}
    {%- set relations = [] -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes()
          if ((node.config.meta or {}).get('privacy') or {}).get('role') not in ('vault', 'system', 'audit') -%}
        {%- do relations.append(api.Relation.create(schema=node.schema, identifier=node.alias)) -%}
    {%- endfor -%}
    {{ return(relations) }}
{%- endmacro %}
