{{ config(tags=['compliance']) }}
{#- Every model, seed and snapshot declares its privacy meta, and every column that
    looks like personal data (built or documented) is declared in pii_columns. -#}
{%- set columns_by_node = {} -%}
{%- set nodes = gdpr_lakehouse.privacy_contract_nodes() if execute else [] -%}
{%- for node in nodes -%}
    {%- do columns_by_node.update({node.unique_id: gdpr_lakehouse.node_columns(node)}) -%}
{%- endfor -%}
{{ gdpr_lakehouse.problems_as_rows(
    gdpr_lakehouse.privacy_contract_problems(nodes, columns_by_node),
    ['node', 'column_name', 'problem']) }}
