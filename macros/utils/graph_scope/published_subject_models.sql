{#- The models consumers read that hold one row per subject (or more): meta audience
    consumers and a subject key, built (tables and views). Each: {node, relation, key,
    kind (id | pseudonym), table (true unless a view)}. Restriction of processing
    unpublishes from the tables and checks them all. -#}
{% macro published_subject_models() -%}
    {{ return(adapter.dispatch('published_subject_models', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__published_subject_models() -%}
    {%- set found = [] -%}
    {%- for node in gdpr_lakehouse.privacy_contract_nodes() if node.resource_type == 'model'
          and node.config.materialized != 'ephemeral'
          and (node.config.meta or {}).get('audience') == 'consumers'
          and ((node.config.meta or {}).get('privacy') or {}).get('subject_key') -%}
        {%- set privacy = node.config.meta.privacy -%}
        {%- if not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}$', privacy.subject_key | string) -%}
            {%- do exceptions.raise_compiler_error(node.unique_id ~ " declares subject_key " ~ (privacy.subject_key | string)[:64] ~ "; it must be an identifier") -%}
        {%- endif -%}
        {%- set relation = adapter.get_relation(database=none, schema=node.schema, identifier=node.alias) -%}
        {%- if relation is not none -%}
            {%- do found.append({'node': node.unique_id, 'relation': relation, 'key': privacy.subject_key,
                'kind': 'pseudonym' if privacy.get('subject_key_kind') == 'pseudonym' else 'id',
                'table': node.config.materialized != 'view'}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found) }}
{%- endmacro %}
