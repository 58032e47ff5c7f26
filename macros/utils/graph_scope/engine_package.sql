{#
    Which nodes of the dbt graph the privacy engine looks at. This project is both the
    engine (a package) and its first adopter (the demo models), so a node's package is
    never a test of whether it is ours: an adopter's models live in its root project,
    the engine's control tables in package `gdpr_lakehouse`.
#}

{#- The name the engine's own nodes carry in the graph, whoever installs it. -#}
{% macro engine_package() -%}
    {{ return(adapter.dispatch('engine_package', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__engine_package() -%}
    {{ return('gdpr_lakehouse') }}
{%- endmacro %}
