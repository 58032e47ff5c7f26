{% macro statistics_specs_from_graph() -%}
    {{ return(adapter.dispatch('statistics_specs_from_graph', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__statistics_specs_from_graph() -%}
    {%- set specs = [] -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes() -%}
        {%- set privacy = (node.config.meta or {}).get('privacy') or {} -%}
        {#- PII, the subject key and pseudonyms: what the statistics must not hold -#}
        {%- set private = gdpr_lakehouse._stats_excluded_columns(privacy, (node.columns or {}).keys()) -%}
        {%- do specs.append({'relation': api.Relation.create(schema=node.schema, identifier=node.alias), 'pii_columns': private,
                             'truncated_key': gdpr_lakehouse._stats_pruning_key(privacy)}) -%}
    {%- endfor -%}
    {{ return(specs) }}
{%- endmacro %}
