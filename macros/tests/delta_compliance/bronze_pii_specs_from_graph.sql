{% macro bronze_pii_specs_from_graph() -%}
    {{ return(adapter.dispatch('bronze_pii_specs_from_graph', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__bronze_pii_specs_from_graph() -%}
    {%- set specs = [] -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes('bronze') -%}
        {%- set privacy = (node.config.meta or {}).get('privacy') or {} -%}
        {%- if privacy.get('pii_columns') and privacy.get('subject_key') -%}
            {%- do specs.append({
                'relation': api.Relation.create(schema=node.schema, identifier=node.alias),
                'missing': adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) is none,
                'subject_key': privacy['subject_key'],
                'pii_columns': privacy['pii_columns']}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(specs) }}
{%- endmacro %}
