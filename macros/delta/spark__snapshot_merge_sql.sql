{#
    dbt-spark's snapshot MERGE, inserting the staged columns by name (as dbt's default
    does) instead of `insert *`. A snapshot keeps every column it ever had; when its
    source stops producing one (silver stopped keeping a patient's source time of
    change: an exact time that singles a person out), Delta's `insert *` cannot resolve
    the column the source lacks and the snapshot stops with an internal error. By name,
    the retired column is null in every new version and the old versions are as they
    were (the privacy contract test names it until it is declared retired).
#}
{% macro spark__snapshot_merge_sql(target, source, insert_cols) -%}
    {%- set columns = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() -%}
    {%- set insert_cols_csv = insert_cols | join(', ') -%}

    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ source }} as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.{{ columns.dbt_scd_id }} = DBT_INTERNAL_DEST.{{ columns.dbt_scd_id }}
    when matched
     {% if config.get("dbt_valid_to_current") %}
       and ( DBT_INTERNAL_DEST.{{ columns.dbt_valid_to }} = {{ config.get('dbt_valid_to_current') }} or
             DBT_INTERNAL_DEST.{{ columns.dbt_valid_to }} is null )
     {% else %}
       and DBT_INTERNAL_DEST.{{ columns.dbt_valid_to }} is null
     {% endif %}
     and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
        then update
        set {{ columns.dbt_valid_to }} = DBT_INTERNAL_SOURCE.{{ columns.dbt_valid_to }}

    when not matched
     and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert ({{ insert_cols_csv }})
        values ({% for column in insert_cols %}DBT_INTERNAL_SOURCE.{{ column }}{% if not loop.last %}, {% endif %}{% endfor %})
{%- endmacro %}
