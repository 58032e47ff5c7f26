{{ config(tags=['compliance']) }}
{#- No restricted subject is published (GDPR Art. 18): for every model the consumers read
    (meta audience: consumers) that has a subject key, the rows of a subject whose
    processing is restricted (restrict_processing) or who is under a legal hold. Fails
    between a restriction and the next build of a per-subject gold table, and on a
    published model that does not filter with not_restricted. -#}
{%- set published = [] -%}
{%- for node in (graph.nodes.values() if execute else []) if node.resource_type == 'model'
      and gdpr_lakehouse.in_privacy_scope(node)
      and (node.config.meta or {}).get('audience') == 'consumers'
      and ((node.config.meta or {}).get('privacy') or {}).get('subject_key')
      and adapter.get_relation(database=none, schema=node.schema, identifier=node.alias) is not none -%}
    {%- do published.append(node) -%}
{%- endfor -%}
{%- for node in published %}
{%- set privacy = node.config.meta.privacy %}
select
    '{{ node.schema }}.{{ node.alias }}' as relation,
    count(*) as rows_of_restricted_subjects
from {{ api.Relation.create(schema=node.schema, identifier=node.alias) }} as published
where not {{ gdpr_lakehouse.not_restricted('published.' ~ adapter.quote(privacy.subject_key), privacy.get('subject_key_kind', 'id')) }}
having count(*) > 0
{{ 'union all' if not loop.last }}
{%- endfor %}
{%- if not published %}
select cast(null as string) as relation, cast(0 as bigint) as rows_of_restricted_subjects
where false
{%- endif %}
-- depends_on: {{ ref('privacy_restrictions') }}
-- depends_on: {{ ref('privacy_legal_holds') }}
-- depends_on: {{ ref('privacy_subject_keys') }}
