{#- The compliance check: any privilege a consumer group or the PII reader group holds
    on a restricted relation, directly or inherited from its schema or catalog. -#}
{% macro consumer_grants_on_restricted_sql() -%}
    {{ return(adapter.dispatch('consumer_grants_on_restricted_sql', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__consumer_grants_on_restricted_sql() -%}
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
