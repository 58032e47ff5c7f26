{# gdpr_erase's evidence per request and relation, and its printed summary. #}

{#- Evidence per request and relation, in one MERGE: rows each request lost, from the
    batch's erasure commits (found by their tag, so a rerun recounts them and never
    adds up twice): their operation metrics for a one-request batch, their Change Data
    Feed split per request otherwise; the vault (no change feed): 1 when the key existed. -#}
{% macro _evidence_sql(outcomes, ctx) -%}
merge into {{ ctx.evidence }} as evidence
using (
    {%- for outcome in outcomes %}
    {%- set step = outcome.step %}
    select
        batch.request_id,
        '{{ step.relation_name }}' as relation,
        '{{ step.node }}' as node,
        '{{ step.action }}' as action,
        cast({{ outcome.version_before if outcome.version_before is not none else 'null' }} as bigint) as version_before,
        cast({{ outcome.version_after if outcome.version_after is not none else 'null' }} as bigint) as version_after,
        {%- if step.action == 'shred' %}
        cast(max(case when batch.erase_key is not null and batch.subject_pseudonym is not null then 1 else 0 end) as bigint) as rows_affected,
        {%- elif outcome.versions and ctx.single %}
        cast({{ outcome.metric_rows }} as bigint) as rows_affected,
        {%- elif outcome.versions %}
        count(changes.erase_key) as rows_affected,
        {%- else %}
        cast(0 as bigint) as rows_affected,
        {%- endif %}
        {{ outcome.attempts }} as attempts,
        '{{ outcome.status }}' as status,
        {%- if outcome.status == 'absent' %}
        'relation not built: nothing to erase' as detail,
        {%- elif step.action == 'shred' %}
        'key deleted; vault purged at once (REORG, VACUUM LITE 0 h)' as detail,
        {%- else %}
        '{{ step.action }}d in commit(s) {{ outcome.versions | join(" ") or "none (no rows)" }}' as detail,
        {%- endif %}
        {{ 'current_timestamp()' if step.action == 'shred' else 'cast(null as timestamp)' }} as purged_at
    from ({{ gdpr_lakehouse._batch_source(step, gdpr_lakehouse._batch_base(ctx)) }}) as batch
    {%- if step.action != 'shred' and outcome.versions and not ctx.single %}
    left join (
        {{ gdpr_lakehouse._erased_in_commits_sql(step, outcome.versions) }}
    ) as changes on changes.erase_key = batch.erase_key
    {%- endif %}
    group by batch.request_id
    {{- '
    union all' if not loop.last }}
    {%- endfor %}
) as outcome
on evidence.request_id = outcome.request_id and evidence.relation = outcome.relation and evidence.action != 'reapply'
when matched then update set
    version_before = outcome.version_before,
    version_after = outcome.version_after,
    rows_affected = outcome.rows_affected,
    attempts = outcome.attempts,
    status = outcome.status,
    erased_at = current_timestamp(),
    reorg_at = coalesce(evidence.reorg_at, outcome.purged_at),
    purged_at = coalesce(evidence.purged_at, outcome.purged_at),
    detail = outcome.detail
when not matched then insert (
    {{ gdpr_lakehouse._evidence_columns() }}
) values (
    outcome.request_id, outcome.relation, outcome.node, outcome.action, outcome.version_before,
    outcome.version_after, null, outcome.rows_affected, outcome.attempts, outcome.status,
    current_timestamp(), current_timestamp(), outcome.purged_at, outcome.purged_at, outcome.detail
)
{%- endmacro %}

{#- One line per relation for the printed summary. -#}
{% macro _evidence_summary_sql(ctx, request_ids) -%}
select
    relation,
    min(action),
    concat(cast(min(version_before) as string), ' -> ', cast(max(version_after) as string)),
    sum(rows_affected),
    max(attempts)
from {{ ctx.evidence }}
where request_id in ({{ gdpr_lakehouse._sql_list(request_ids) }}) and action != 'reapply'
group by relation
{%- endmacro %}

{#- The subject keys an erasure (or a re-erasure) removed in the given commits of a
    relation: the pre-images of its deletes and anonymizing updates, from the Change
    Data Feed. Evidence counts rows from it, once for gdpr_erase and restore alike. -#}
{% macro _erased_in_commits_sql(step, versions) -%}
select {{ adapter.quote(step.key) }} as erase_key
from table_changes('{{ step.relation_name }}', {{ versions | min }}, {{ versions | max }})
where _change_type in ('delete', 'update_preimage')
    and _commit_version in ({{ versions | join(', ') }})
{%- endmacro %}

{#- privacy.erasure_evidence's columns, in the order every evidence insert gives them. -#}
{% macro _evidence_columns() -%}
request_id, relation, node, action, version_before, version_after, rows_expected, rows_affected,
    attempts, status, started_at, erased_at, reorg_at, purged_at, detail
{%- endmacro %}
