{#- What gdpr_erase did, printed: each relation's action, versions, rows and attempts, then the requests (the first 20). -#}
{% macro _print_erasure(outcomes, ctx, started) -%}
    {%- set seconds = (modules.datetime.datetime.utcnow() - started).total_seconds() -%}
    {%- set by_relation = {} -%}
    {%- for row in run_query(gdpr_lakehouse._evidence_summary_sql(ctx, ctx.claimed)) -%}
        {%- do by_relation.update({row[0]: row}) -%}
    {%- endfor -%}
    {%- set lines = [] -%}
    {%- for outcome in outcomes if outcome.step.relation_name in by_relation -%}
        {%- do lines.append(by_relation[outcome.step.relation_name]) -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table('Erased ' ~ ctx.claimed | length ~ ' request(s) in ' ~ '%.1f' | format(seconds) ~ ' s:',
        ['relation', 'action', 'version before -> after', 'rows', 'attempts'], lines) -%}
    {%- set done = run_query("select request_id, subject_id, status, cast(shredded_at as string) from " ~ ctx.requests
        ~ " where request_id in (" ~ gdpr_lakehouse._sql_list(ctx.claimed[:20]) ~ ") order by subject_id") -%}
    {%- do gdpr_lakehouse.print_table('Requests' ~ (' (first 20)' if ctx.claimed | length > 20 else '') ~ ':',
        ['request_id', 'subject_id', 'status', 'key shredded at'], done.rows) -%}
{%- endmacro %}
