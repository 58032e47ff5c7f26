{#- The relations python_jobs.audit_stream audits: Delta tables of this project that
    declare delta.enableChangeDataFeed, except the audit log itself. -#}
{% macro audited_relations_from_graph() -%}
    {{ return(adapter.dispatch('audited_relations_from_graph', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__audited_relations_from_graph() -%}
    {%- set relations = [] -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes()
          if ((node.config.tblproperties or {}).get('delta.enableChangeDataFeed') | string | lower) == 'true'
          and ((node.config.meta or {}).get('privacy') or {}).get('role') != 'audit' -%}
        {%- do relations.append(api.Relation.create(schema=node.schema, identifier=node.alias)) -%}
    {%- endfor -%}
    {{ return(relations) }}
{%- endmacro %}
