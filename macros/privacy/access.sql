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

{#- The grants of a relation published to consumers (the masked views; gold sets its
    own in dbt_project.yml): SELECT for the consumer groups and the PII readers. -#}
{% macro consumer_grants() -%}
    {%- if target.type == 'databricks' -%}
        {{ return({'select': gdpr_lakehouse.consumer_groups() + [gdpr_lakehouse.pii_reader_group()]}) }}
    {%- else -%}
        {{ return({}) }}
    {%- endif -%}
{%- endmacro %}

{#- on-run-start: the names that reach GRANT statements are group names. -#}
{% macro validate_access_vars() -%}
    {%- if target.type == 'databricks' -%}
        {%- set groups = gdpr_lakehouse.consumer_groups() + [gdpr_lakehouse.pii_reader_group()] -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{#- Relations consumers must not read: every table, view and snapshot of the project
    not declared meta.audience 'consumers'. -#}
{% macro restricted_relations() -%}
    {%- set names = [] -%}
    {#- parse time: no graph yet (an empty list, never a pass: `in ()` does not run) -#}
    {%- for node in (gdpr_lakehouse.privacy_contract_nodes() if execute else [])
          if node.config.materialized != 'ephemeral' and (node.config.meta or {}).get('audience') != 'consumers' -%}
        {%- do names.append([node.database, node.schema, node.alias] | reject('none') | join('.') | lower) -%}
    {%- endfor -%}
    {{ return(names | sort) }}
{%- endmacro %}

{#- The compliance check: any privilege a consumer group or the PII reader group holds
    on a restricted relation, directly or inherited from its schema or catalog. -#}
{% macro consumer_grants_on_restricted_sql() -%}
    {%- set grantees = gdpr_lakehouse.consumer_groups() + [gdpr_lakehouse.pii_reader_group()] -%}
    select
        table_catalog,
        table_schema,
        table_name,
        grantee,
        privilege_type,
        inherited_from
    from system.information_schema.table_privileges
    where
        grantee in ({% for grantee in grantees %}'{{ grantee }}'{{ ', ' if not loop.last }}{% endfor %})
        and lower(concat_ws('.', table_catalog, table_schema, table_name)) in (
            {%- for name in gdpr_lakehouse.restricted_relations() %}
            '{{ name }}'{{ ',' if not loop.last }}
            {%- endfor %}
        )
{%- endmacro %}
