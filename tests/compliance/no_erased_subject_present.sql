{{ config(tags=['compliance']) }}
{#- No erased subject is present anywhere: for every relation of the erasure plan,
    rows whose key is an erased subject's id or pseudonym (every tombstone). Fails
    after a rollback done by hand (a bare RESTORE, a copy from backup) that brought a
    forgotten person back; restore_version and gdpr_erase re-apply the erasures. -#}
{%- set ctx = {
    'tombstones': ref('privacy_erasure_tombstones'),
    'requests': ref('privacy_erasure_requests'),
    'vault': ref('privacy_subject_keys'),
    'system_keys': ref('privacy_system_keys'),
} -%}
{%- set steps = [] -%}
{%- for step in (gdpr_lakehouse.erasure_plan() if execute else []) if step.action != 'shred'
      and adapter.get_relation(database=none, schema=step.relation.schema, identifier=step.relation.identifier) is not none -%}
    {%- do steps.append(step) -%}
{%- endfor -%}
{#- one semi join per relation: each row counted once, however many tombstones its
    subject has (the keys are hashed row by row; no distinct-keys pass first) -#}
{%- for step in steps %}
select
    '{{ step.relation_name }}' as relation,
    count(*) as rows_of_erased_subjects
from (
    {#- hashed in a projection: macro tombstone_hash -#}
    select {{ gdpr_lakehouse.tombstone_hash('data.' ~ adapter.quote(step.key), keys=ctx.system_keys) }} as erase_hash
    from {{ step.relation }} as data
) as target
left semi join {{ ctx.tombstones }} as tombstones
    on tombstones.{{ 'pseudonym_hash' if step.key_kind == 'pseudonym' else 'subject_hash' }} = target.erase_hash
having count(*) > 0
{{ 'union all' if not loop.last }}
{%- endfor %}
{%- if not steps %}
select cast(null as string) as relation, cast(0 as bigint) as rows_of_erased_subjects
where false
{%- endif %}
