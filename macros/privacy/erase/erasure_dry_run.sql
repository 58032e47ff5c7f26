{# gdpr_erase --args '{dry_run: true}': what would go, read only. #}

{#- dry_run: rows per relation that would go; reads only. -#}
{% macro _erasure_dry_run(plan, ctx, ids) -%}
    {%- set alias = 'given' if ids else 'requests' -%}
    {%- set not_held -%}
not exists (
        select 1 from {{ ctx.holds }} as holds
        where holds.subject_id = {{ alias }}.subject_id and holds.released_at is null
    )
    {%- endset -%}
    {%- set base -%}
        {%- if ids -%}
select
    cast(null as string) as request_id,
    given.subject_id,
    vault.subject_type,
    vault.subject_pseudonym
from (select * from values {% for subject_id in ids %}({{ gdpr_lakehouse._sql_string(subject_id) }}){{ ', ' if not loop.last }}{% endfor %} as given (subject_id)) as given
left join {{ ctx.vault }} as vault on given.subject_id = vault.subject_id
where {{ not_held }}
        {%- else -%}
select
    requests.request_id,
    requests.subject_id,
    coalesce(requests.subject_type, vault.subject_type) as subject_type,
    coalesce(requests.subject_pseudonym, vault.subject_pseudonym) as subject_pseudonym
from {{ ctx.requests }} as requests
left join {{ ctx.vault }} as vault on requests.subject_id = vault.subject_id
where requests.status in {{ gdpr_lakehouse.request_status_in('unfinished') }} and {{ not_held }}
        {%- endif -%}
    {%- endset -%}
    {%- set subjects = gdpr_lakehouse.scalar_query('select count(distinct subject_id) from (' ~ base ~ ') as batch', 0) -%}
    {#- every built relation's count in ONE query (one Spark job, not one per relation) -#}
    {%- set counts = [] -%}
    {%- set built = [] -%}
    {%- for step in plan -%}
        {%- if adapter.get_relation(database=none, schema=step.relation.schema, identifier=step.relation.identifier) is not none -%}
            {%- do built.append(loop.index0) -%}
            {%- set query -%}
select {{ loop.index0 }} as position, count(*) as erasable_rows from {{ step.relation }} as target
where target.{{ adapter.quote(step.key) }} in (
    select erase_key from ({{ gdpr_lakehouse._batch_source(step, base) }}) as batch
)
            {%- endset -%}
            {%- do counts.append(query) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set by_position = {} -%}
    {%- for row in (run_query(counts | join('\nunion all\n')) if counts else []) -%}
        {%- do by_position.update({row[0] | int: row[1] | int}) -%}
    {%- endfor -%}
    {%- if by_position.keys() | sort | list != built -%}
        {%- do exceptions.raise_compiler_error('gdpr_erase dry run: ' ~ built | length ~ ' relation(s) counted but the answer held positions '
            ~ (by_position.keys() | sort | list) ~ ', not ' ~ built ~ '; nothing was changed') -%}
    {%- endif -%}
    {%- set lines = [] -%}
    {%- set ns = namespace(total=0) -%}
    {%- for step in plan -%}
        {%- if loop.index0 not in by_position -%}
            {%- do lines.append([step.relation_name, step.action, 'not built']) -%}
        {%- else -%}
            {%- set ns.total = ns.total + by_position[loop.index0] -%}
            {%- do lines.append([step.relation_name, step.action, by_position[loop.index0]]) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table('Dry run: erasing ' ~ subjects ~ ' subject(s) would remove or anonymize ' ~ ns.total
        ~ ' row(s) (nothing was changed):', ['relation', 'action', 'rows'], lines) -%}
    {{ return(lines) }}
{%- endmacro %}
