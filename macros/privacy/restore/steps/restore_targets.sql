{#- The relations a restore_version changes: the model at the version, time or savepoint asked for, and with cascade its downstream relations at the same point in time, parents first; those it leaves go to `left`, with why. -#}
{% macro _restore_targets(node, given, dry_run, left) -%}
    {%- if given.savepoint is not none -%}
        {%- set root = gdpr_lakehouse._savepoint_target(node, given.savepoint) -%}
    {%- else -%}
        {%- set root = gdpr_lakehouse._restore_target(node, given.version, given.timestamp) -%}
    {%- endif -%}
    {%- set targets = [root] -%}
    {%- if given.cascade -%}
        {%- do gdpr_lakehouse._cascade_targets(node, root.point_in_time, targets, left) -%}
    {%- endif -%}
    {%- if not dry_run -%}
        {%- for target in targets[1:] if not target.changes -%}
            {%- do left.append([target.relation_name, 'already at version ' ~ target.version ~ ', its version of that time']) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(targets) }}
{%- endmacro %}
