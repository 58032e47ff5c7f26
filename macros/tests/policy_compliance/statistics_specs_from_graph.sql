{% macro statistics_specs_from_graph() -%}
    {{ return(adapter.dispatch('statistics_specs_from_graph', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__statistics_specs_from_graph() -%}
    {%- set specs = [] -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes() -%}
        {%- set pii = (((node.config.meta or {}).get('privacy') or {}).get('pii_columns')) or [] -%}
        {%- do specs.append({'relation': api.Relation.create(schema=node.schema, identifier=node.alias), 'pii_columns': pii}) -%}
    {%- endfor -%}
    {{ return(specs) }}
{%- endmacro %}
