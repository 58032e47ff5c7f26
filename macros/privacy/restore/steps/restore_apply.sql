{#- Steps 2-4 of restore_version: the restore recorded (status restoring), then relation by relation, parents first, the RESTORE (or a savepoint's copy written back) and at once the erasures re-applied and a CDC bronze table's later landing files forgotten; the items done. -#}
{% macro _restore_apply(ctx, todo, restore_id, reason) -%}
    {#- 2-4, relation by relation, parents first -#}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='restore', reason=reason, extra={'restore_id': restore_id})) -%}
    {%- do run_query(gdpr_lakehouse._restore_log_start_sql(ctx, restore_id, todo, reason)) -%}
    {%- set items = [] -%}
    {%- for target in todo -%}
        {%- if not loop.first -%}
            {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='restore', reason=reason, extra={'restore_id': restore_id})) -%}
        {%- endif -%}
        {%- set relation_started = modules.datetime.datetime.utcnow() -%}
        {%- if target.get('savepoint') -%}
            {%- do run_query('insert overwrite table ' ~ target.relation ~ ' select * from ' ~ target.source) -%}
        {%- else -%}
            {%- do run_query('restore table ' ~ target.relation ~ ' to version as of ' ~ target.version) -%}
        {%- endif -%}
        {%- if var('gdpr_lakehouse_fault', none) == 'after_restore' -%}
            {%- do exceptions.raise_compiler_error("restore_version: fault injected after the RESTORE of " ~ target.relation_name
                ~ " (var gdpr_lakehouse_fault, for tests); the next restore_version or gdpr_erase heals it") -%}
        {%- endif -%}
        {#- at once: the erased subjects the RESTORE brought back go again -#}
        {%- set item = {'restore_id': restore_id, 'node': target.node, 'relation': target.relation, 'target': target} -%}
        {%- do gdpr_lakehouse._reapply_write(ctx, item) -%}
        {%- do gdpr_lakehouse.forget_landing_files(target.node, target.version) -%}
        {%- do item.update({'seconds': (modules.datetime.datetime.utcnow() - relation_started).total_seconds()}) -%}
        {%- do items.append(item) -%}
    {%- endfor -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {{ return(items) }}
{%- endmacro %}
