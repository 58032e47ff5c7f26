{#
    Who may read which relation, on Azure Databricks (Unity Catalog). Consumers read
    only what is published to them: gold and the masked views (meta.audience
    'consumers'). Everything else (bronze, silver, the vault, the control tables,
    audit, snapshots, seeds) is granted to nobody: dbt revokes any direct grant found
    on it at every build (grants {select: []} in dbt_project.yml), so only the pipeline's
    principal, its owner, reads it. The masked views run with their owner's rights on
    the tables beneath them, so consumers need SELECT on the view only.

    Open-source Spark has no GRANT/SHOW GRANTS: on the local and thrift targets no grants
    are configured and there is no security boundary (README, "Who can read what").
#}

{#- var consumer_groups: the account groups that read gold and the masked views
    (default [data_consumers]). -#}
{% macro consumer_groups() -%}
    {{ return(adapter.dispatch('consumer_groups', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__consumer_groups() -%}
    {%- set groups = var('consumer_groups', ['data_consumers']) -%}
    {%- if groups is string or groups is mapping or groups is not iterable or groups | length == 0 -%}
        {%- do exceptions.raise_compiler_error("var consumer_groups must be a non-empty list of group names, e.g. [analysts]; got "
            ~ (groups | tojson)[:80]) -%}
    {%- endif -%}
    {%- for group in groups -%}
        {%- if group is not string or not modules.re.match('^[A-Za-z0-9_.@ -]{1,128}$', group) -%}
            {%- do exceptions.raise_compiler_error("var consumer_groups: " ~ (group | tojson)[:64]
                ~ " is not a group name (letters, digits, space and _ . @ - only, 128 at most)") -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(groups | list) }}
{%- endmacro %}
