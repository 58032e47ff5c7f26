{#- Columns as built (the relation in the warehouse) and as documented (yml). -#}
{% macro node_columns(node) -%}
    {{ return(adapter.dispatch('node_columns', 'gdpr_lakehouse')(node)) }}
{%- endmacro %}

{% macro spark__node_columns(node) -%}
    {%- set names = [] -%}
    {%- for name in node.columns -%}{%- do names.append(name | lower) -%}{%- endfor -%}
    {%- if execute and node.config.materialized != 'ephemeral' -%}
        {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
        {%- if relation is not none -%}
            {%- for column in adapter.get_columns_in_relation(relation) if column.name | lower not in names -%}
                {%- do names.append(column.name | lower) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(names) }}
{%- endmacro %}
