{% macro bronze_pii_specs_from_graph(layers=['bronze']) -%}
    {{ return(adapter.dispatch('bronze_pii_specs_from_graph', 'gdpr_lakehouse')(layers)) }}
{%- endmacro %}

{#- key_column: the vault's column the relation's subject key matches (subject_id, or
    subject_pseudonym where meta.privacy.subject_key_kind is pseudonym). require_key:
    bronze only. Its rows are deleted with the key and the check runs after the
    vault; silver and the snapshots may still hold a shredded subject's ciphertext
    until they are rebuilt or erased (what no_erased_subject_present watches). There
    the check is that no PII is plaintext or opens with another key. -#}
{% macro spark__bronze_pii_specs_from_graph(layers=['bronze']) -%}
    {%- set specs = [] -%}
    {%- for layer in layers -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes(layer) -%}
        {%- set privacy = (node.config.meta or {}).get('privacy') or {} -%}
        {%- if privacy.get('pii_columns') and privacy.get('subject_key') -%}
            {%- do specs.append({
                'relation': api.Relation.create(schema=node.schema, identifier=node.alias),
                'missing': adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) is none,
                'subject_key': privacy['subject_key'],
                'key_column': 'subject_pseudonym' if privacy.get('subject_key_kind') == 'pseudonym' else 'subject_id',
                'require_key': layer == 'bronze',
                'pii_columns': privacy['pii_columns']}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- endfor -%}
    {{ return(specs) }}
{%- endmacro %}
