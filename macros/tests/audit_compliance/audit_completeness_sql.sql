{#- Rows for every commit version (of every audited relation, as DESCRIBE HISTORY lists
    them now) that audit_log lacks, for every hole in a relation's versions from 0 up
    (versions that left the Delta log unaudited are rows of their own, LOG EXPIRED),
    and for every (relation, version, change type) it holds more than once. Empty when the audit is complete and exact. -#}
{% macro audit_completeness_sql(audit_log) -%}
    {{ return(adapter.dispatch('audit_completeness_sql', 'gdpr_lakehouse')(audit_log)) }}
{%- endmacro %}

{% macro spark__audit_completeness_sql(audit_log) -%}
    {%- set expected = [] -%}
    {%- if execute -%}
        {%- for relation in gdpr_lakehouse.audited_relations_from_graph()
              if adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier) is not none -%}
            {%- for row in run_query('describe history ' ~ relation) -%}
                {%- do expected.append("('" ~ relation.schema ~ "." ~ relation.identifier ~ "', " ~ (row['version'] | int) ~ ")") -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endif %}
with expected as (
    {%- if expected %}
    select * from values {{ expected | join(', ') }} as expected (relation, commit_version)
    {%- else %}
    select cast(null as string) as relation, cast(null as bigint) as commit_version where false
    {%- endif %}
),

audited as (
    select relation, commit_version, change_type from {{ audit_log }}
),

-- every version of an audited relation, from 0 up, is in the log: audited, or recorded
-- as LOG EXPIRED when it left the Delta log first; a hole is a version skipped silently
versions as (
    select
        relation,
        commit_version,
        lag(commit_version, 1, -1) over (partition by relation order by commit_version) as previous_version
    from (select distinct relation, commit_version from audited) as distinct_versions
    where relation in (select relation from expected)
)

select expected.relation, expected.commit_version, 'not in the audit log' as problem
from expected
left anti join audited
    on audited.relation = expected.relation and audited.commit_version = expected.commit_version
union all
select relation, previous_version + 1 as commit_version,
    'versions ' || (previous_version + 1) || '-' || (commit_version - 1) || ' neither audited nor recorded as expired' as problem
from versions
where commit_version > previous_version + 1
union all
select relation, commit_version, 'audited ' || count(*) || ' times (change type ' || coalesce(change_type, 'none') || ')' as problem
from audited
group by relation, commit_version, change_type
having count(*) > 1
{%- endmacro %}
