{#- The nodes the contract covers: this project's models, seeds and snapshots. -#}
{% macro privacy_contract_nodes() -%}
    {{ return(adapter.dispatch('privacy_contract_nodes', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__privacy_contract_nodes() -%}
    {%- set nodes = [] -%}
    {%- for node in graph.nodes.values()
          if node.resource_type in ('model', 'seed', 'snapshot') and node.package_name in (project_name, gdpr_lakehouse.engine_package()) -%}
        {%- do nodes.append(node) -%}
    {%- endfor -%}
    {{ return(nodes) }}
{%- endmacro %}
