{#- One of the engine's own models (control tables, vault, audit log) by name, or none
    when it is not in the graph. -#}
{% macro engine_node(name) -%}
    {{ return(adapter.dispatch('engine_node', 'gdpr_lakehouse')(name)) }}
{%- endmacro %}

{% macro spark__engine_node(name) -%}
    {{ return(graph.nodes.get('model.' ~ gdpr_lakehouse.engine_package() ~ '.' ~ name)) }}
{%- endmacro %}
