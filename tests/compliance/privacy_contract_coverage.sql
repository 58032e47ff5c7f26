{{ config(tags=['compliance']) }}
{#- Every model, seed and snapshot declares its privacy meta, every column it builds or
    documents is in one class, and every column that looks like personal data is
    declared in pii_columns; every subject_type is one a subject feed keys. -#}
{%- set columns_by_node = {} -%}
{%- set unbuilt = [] -%}
{%- set nodes = gdpr_lakehouse.privacy_contract_nodes() if execute else [] -%}
{%- for node in nodes -%}
    {%- do columns_by_node.update({node.unique_id: gdpr_lakehouse.node_columns(node)}) -%}
    {%- if node.config.materialized != 'ephemeral'
          and adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) is none -%}
        {%- do unbuilt.append(node.unique_id) -%}
    {%- endif -%}
{%- endfor -%}
{{ gdpr_lakehouse.problems_as_rows(
    gdpr_lakehouse.privacy_contract_problems(nodes, columns_by_node, unbuilt,
        gdpr_lakehouse.subject_types() if execute else none),
    ['node', 'column_name', 'problem']) }}
