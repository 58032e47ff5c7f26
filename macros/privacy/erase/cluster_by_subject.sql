{#
    dbt run-operation cluster_by_subject                               # every relation keyed by pseudonym
    dbt run-operation cluster_by_subject --args '{relations: [silver.patients]}'

    The layout erasure by pruning needs (gdpr_erase, _pruning_prefixes): each relation
    of the erasure plan keyed by pseudonym laid out by its key, so each file holds a
    narrow range of pseudonyms and a small batch's MERGE reads only the files whose
    range holds one of its prefixes. Arriving rows are appended in arrival order, and
    every file then holds every range: pruning reads them all. Per relation, by its
    model's meta.privacy.layout:
      zorder (the default)  OPTIMIZE ... ZORDER BY (key): rewrites the whole relation
                            each time (open-source Delta): a schedule, weekly or nightly
      liquid                liquid clustering by the key (ALTER TABLE ... CLUSTER BY,
                            once), then OPTIMIZE: clusters what arrived since
      none                  left as it is
    Run it on a schedule, or after every build with var cluster_after_build (the
    post-hook cluster_after_build). REORG PURGE skips liquid-clustered files
    (4.0.1-4.4.0): python_jobs.purge takes its detour for them (docs/guides/erase.md).
    Every commit is tagged purpose cluster. Prints what it did; returns the
    relations clustered.
#}
{% macro cluster_by_subject(relations=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('cluster_by_subject', kwargs, ['relations']) -%}
    {{ return(adapter.dispatch('cluster_by_subject', 'gdpr_lakehouse')(relations)) }}
{%- endmacro %}

{% macro spark__cluster_by_subject(relations) -%}
    {%- set steps = gdpr_lakehouse._cluster_steps() -%}
    {%- if relations is not none -%}
        {%- if relations is string or relations is mapping or relations is not iterable or relations | length == 0 -%}
            {%- do exceptions.raise_compiler_error("cluster_by_subject: relations must be a non-empty list of schema.table names; got "
                ~ (relations | string)[:80]) -%}
        {%- endif -%}
        {%- set known = steps | map(attribute='relation_name') | list -%}
        {%- for name in relations if name not in known -%}
            {%- do exceptions.raise_compiler_error("cluster_by_subject: " ~ (name | string)[:80] ~ " is not a relation keyed by pseudonym; allowed: "
                ~ known | join(', ') ~ ". Nothing was run") -%}
        {%- endfor -%}
        {%- set steps = steps | selectattr('relation_name', 'in', relations) | list -%}
    {%- endif -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='cluster')) -%}
    {%- set rows = [] -%}
    {%- set done = [] -%}
    {%- for step in steps -%}
        {%- if step.layout == 'none' -%}
            {%- do rows.append([step.relation_name, 'none', '', 'left as it is']) -%}
        {%- elif not step.has_stats -%}
            {%- do rows.append([step.relation_name, step.layout, '', 'left as it is: no statistics on ' ~ step.key ~ ' (pruning off, or Databricks)']) -%}
        {%- elif adapter.get_relation(database=none, schema=step.relation.schema, identifier=step.relation.identifier) is none -%}
            {%- do rows.append([step.relation_name, step.layout, '', 'not built']) -%}
        {%- else -%}
            {%- set before = run_query('describe detail ' ~ step.relation).rows[0]['numFiles'] -%}
            {%- for statement in gdpr_lakehouse._cluster_statements(step, run_query('describe detail ' ~ step.relation).rows[0]) -%}
                {%- do run_query(statement) -%}
            {%- endfor -%}
            {%- set after = run_query('describe detail ' ~ step.relation).rows[0]['numFiles'] -%}
            {%- do rows.append([step.relation_name, step.layout, before ~ ' -> ' ~ after, 'clustered by ' ~ step.key]) -%}
            {%- do done.append(step.relation_name) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- do gdpr_lakehouse.print_table('cluster_by_subject: ' ~ done | length ~ ' relation(s) laid out by their pseudonym key:',
        ['relation', 'layout', 'files', 'result'], rows) -%}
    {{ return(done) }}
{%- endmacro %}

{#- The plan's relations keyed by pseudonym (their savepoint copies and the vault
    aside), each with its layout: meta.privacy.layout of its model, zorder when
    unset. -#}
{% macro _cluster_steps() -%}
    {%- set steps = [] -%}
    {%- for step in gdpr_lakehouse.erasure_plan(savepoints=false) if step.key_kind == 'pseudonym' and step.action != 'shred' -%}
        {%- set node = graph.nodes.get(step.node) or {} -%}
        {%- set privacy = ((node.get('config') or {}).get('meta') or {}).get('privacy') or {} -%}
        {%- set layout = privacy.get('layout', 'zorder') -%}
        {%- if layout not in ('zorder', 'liquid', 'none') -%}
            {%- do exceptions.raise_compiler_error("cluster_by_subject: " ~ step.node ~ " meta.privacy.layout is " ~ (layout | string)[:40]
                ~ "; allowed: zorder, liquid, none") -%}
        {%- endif -%}
        {%- set laid = {} -%}
        {%- do laid.update(step) -%}
        {#- Z-order and liquid clustering need statistics on the key: kept only for
            erasure by pruning (tblproperties_clause, _stats_pruning_key) -#}
        {%- do laid.update({'layout': layout, 'has_stats': gdpr_lakehouse._stats_pruning_key(privacy).key == step.key}) -%}
        {%- do steps.append(laid) -%}
    {%- endfor -%}
    {{ return(steps) }}
{%- endmacro %}

{#- The statements that lay one relation out by its key, given its DESCRIBE DETAIL
    row, between the session settings of _curve_settings. -#}
{% macro _cluster_statements(step, detail) -%}
    {%- set key = adapter.quote(step.key) -%}
    {%- if step.layout == 'zorder' -%}
        {%- set statements = ['optimize ' ~ step.relation ~ ' zorder by (' ~ key ~ ')'] -%}
    {%- else -%}
        {%- set raw = detail['clusteringColumns'] -%}
        {%- set clustered = (fromjson(raw) if raw is string else (raw or [])) | list -%}
        {%- set statements = [] if clustered == [step.key] else ['alter table ' ~ step.relation ~ ' cluster by (' ~ key ~ ')'] -%}
        {%- do statements.append('optimize ' ~ step.relation) -%}
    {%- endif -%}
    {{ return(gdpr_lakehouse._curve_settings(true) + statements + gdpr_lakehouse._curve_settings(false)) }}
{%- endmacro %}

{#- Delta's curve for one column (Z-order, and liquid clustering's for one column)
    range-partitions the key into spark.databricks.io.skipping.mdc.rangeId.max ranges
    (1,000) and adds a random byte to each row's range id against skew (addNoise):
    the rows of one range then land in two or more neighbouring files, whose key
    ranges overlap. A pseudonym is a hash, evenly spread, so there is no skew to
    break: without the noise and with 65,536 ranges (as many as 4 hex digits tell
    apart) each file holds one run of keys. 2M rows Z-ordered into 1,000 files, 100
    subjects' prefixes: 186 files can hold them with Delta's defaults, 99 with these
    (docs/guides/erase.md). Set before the OPTIMIZE, reset after it. Not on Databricks,
    where a SQL warehouse refuses settings it does not list. -#}
{% macro _curve_settings(on) -%}
    {{ return(adapter.dispatch('_curve_settings', 'gdpr_lakehouse')(on)) }}
{%- endmacro %}

{% macro spark___curve_settings(on) -%}
    {%- set statements = [] -%}
    {%- for name, value in [('spark.databricks.io.skipping.mdc.addNoise', 'false'), ('spark.databricks.io.skipping.mdc.rangeId.max', '65536')] -%}
        {%- do statements.append('set ' ~ name ~ ' = ' ~ value if on else 'reset ' ~ name) -%}
    {%- endfor -%}
    {{ return(statements) }}
{%- endmacro %}

{% macro databricks___curve_settings(on) -%}
    {{ return([]) }}
{%- endmacro %}
