{#- Is a node the engine answers for: the root project's, the engine's, or any other
    package's node that declares a privacy contract (meta.privacy). -#}
{% macro in_privacy_scope(node) -%}
    {{ return(adapter.dispatch('in_privacy_scope', 'gdpr_lakehouse')(node)) }}
{%- endmacro %}

{% macro spark__in_privacy_scope(node) -%}
    {{ return(node.package_name in (project_name, gdpr_lakehouse.engine_package())
        or ((node.config or {}).get('meta') or {}).get('privacy') is not none) }}
{%- endmacro %}
