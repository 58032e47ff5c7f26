{#- The masked views: views of this project that declare pii_columns. -#}
{% macro masked_views_from_graph() -%}
    {{ return(adapter.dispatch('masked_views_from_graph', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__masked_views_from_graph() -%}
    {%- set views = [] -%}
    {%- for node in gdpr_lakehouse.privacy_contract_nodes() if node.config.materialized == 'view' -%}
        {%- set pii = (((node.config.meta or {}).get('privacy') or {}).get('pii_columns')) or [] -%}
        {%- if pii and adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) is not none -%}
            {%- do views.append({'relation': api.Relation.create(schema=node.schema, identifier=node.alias), 'pii_columns': pii}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(views) }}
{%- endmacro %}
