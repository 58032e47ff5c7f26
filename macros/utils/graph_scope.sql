{#
    Which nodes of the dbt graph the privacy engine looks at. This project is both the
    engine (a package) and its first adopter (the demo models), so a node's package is
    never a test of whether it is ours: an adopter's models live in its root project,
    the engine's control tables in package `gdpr_lakehouse`.
#}

{#- The name the engine's own nodes carry in the graph, whoever installs it. -#}
{% macro engine_package() -%}
    {{ return('gdpr_lakehouse') }}
{%- endmacro %}

{#- One of the engine's own models (control tables, vault, audit log) by name, or none
    when it is not in the graph. -#}
{% macro engine_node(name) -%}
    {{ return(graph.nodes.get('model.' ~ gdpr_lakehouse.engine_package() ~ '.' ~ name)) }}
{%- endmacro %}

{#- Is a node the engine answers for: the root project's, the engine's, or any other
    package's node that declares a privacy contract (meta.privacy). -#}
{% macro in_privacy_scope(node) -%}
    {{ return(node.package_name in (project_name, gdpr_lakehouse.engine_package())
        or ((node.config or {}).get('meta') or {}).get('privacy') is not none) }}
{%- endmacro %}

{#- The nodes the contract covers: this project's models, seeds and snapshots. -#}
{% macro privacy_contract_nodes() -%}
    {%- set nodes = [] -%}
    {%- for node in graph.nodes.values()
          if node.resource_type in ('model', 'seed', 'snapshot') and node.package_name in (project_name, gdpr_lakehouse.engine_package()) -%}
        {%- do nodes.append(node) -%}
    {%- endfor -%}
    {{ return(nodes) }}
{%- endmacro %}
