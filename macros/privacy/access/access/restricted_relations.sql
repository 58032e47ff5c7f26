{#- Relations consumers must not read: every table, view and snapshot of the project
    not declared meta.audience 'consumers'. -#}
{% macro restricted_relations() -%}
    {{ return(adapter.dispatch('restricted_relations', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__restricted_relations() -%}
    {%- set names = [] -%}
    {#- parse time: no graph yet (an empty list, never a pass: `in ()` does not run) -#}
    {%- for node in (gdpr_lakehouse.privacy_contract_nodes() if execute else [])
          if node.config.materialized != 'ephemeral' and (node.config.meta or {}).get('audience') != 'consumers' -%}
        {%- do names.append([node.database, node.schema, node.alias] | reject('none') | join('.') | lower) -%}
    {%- endfor -%}
    {{ return(names | sort) }}
{%- endmacro %}
