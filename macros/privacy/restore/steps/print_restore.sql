{#- What restore_version did, printed: each relation's version, commits, rows restored and re-erased; then the relations it left, and why. -#}
{% macro _print_restore(ctx, items, restore_id, reason, started, left) -%}
    {%- set lines = [] -%}
    {%- for item in gdpr_lakehouse._settle_restores(ctx, items) -%}
        {%- do lines.append([item.relation_name, item.target.version ~ ' (' ~ item.target.timestamp_text ~ ')',
            item.target.latest ~ ' -> ' ~ item.restore_commit ~ ((' -> ' ~ item.reapply_commit) if item.reapply_commit is not none else ''),
            item.rows_restored, item.rows_reerased, '%.1f' | format(item.seconds)]) -%}
    {%- endfor -%}
    {%- set seconds = (modules.datetime.datetime.utcnow() - started).total_seconds() -%}
    {%- do gdpr_lakehouse.print_table('Restored ' ~ lines | length ~ ' relation(s) in ' ~ '%.1f' | format(seconds) ~ ' s (restore ' ~ restore_id ~ ', reason: ' ~ reason ~ '):',
        ['relation', 'restored to version', 'version before -> restore -> re-erasure', 'rows restored', 'rows re-erased', 'restore + re-erasure s'], lines) -%}
    {%- do gdpr_lakehouse._print_left(left) -%}
{%- endmacro %}
