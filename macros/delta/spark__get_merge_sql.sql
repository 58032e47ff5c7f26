{#
    dbt-spark's MERGE, plus change-data-capture deletes. A model whose config sets
    `cdc_delete_condition` (a boolean over the source's columns, e.g.
    "source_op = 'delete'") gets
        when matched and <condition> then delete
        when matched then update set ...
        when not matched and not (<condition>) then insert *
    so one MERGE applies inserts, updates and deletes of a CDC batch (shared reference
    000's upsert). Without it, identical to dbt-spark's spark__get_merge_sql.
#}
{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) %}
  {%- set predicates = [] if incremental_predicates is none else [] + incremental_predicates -%}
  {%- set dest_columns = adapter.get_columns_in_relation(target) -%}
  {%- set merge_update_columns = config.get('merge_update_columns') -%}
  {%- set merge_exclude_columns = config.get('merge_exclude_columns') -%}
  {%- set update_columns = get_merge_update_columns(merge_update_columns, merge_exclude_columns, dest_columns) -%}
  {%- set delete_condition = config.get('cdc_delete_condition') -%}
  {%- if delete_condition and (';' in delete_condition or '--' in delete_condition) -%}
      {%- do exceptions.raise_compiler_error("cdc_delete_condition must be one boolean expression, without ; or --") -%}
  {%- endif -%}

  {% if unique_key %}
      {% if unique_key is sequence and unique_key is not mapping and unique_key is not string %}
          {% for key in unique_key %}
              {% do predicates.append('DBT_INTERNAL_SOURCE.' ~ key ~ ' = DBT_INTERNAL_DEST.' ~ key) %}
          {% endfor %}
      {% else %}
          {% do predicates.append('DBT_INTERNAL_SOURCE.' ~ unique_key ~ ' = DBT_INTERNAL_DEST.' ~ unique_key) %}
      {% endif %}
  {% else %}
      {% do predicates.append('FALSE') %}
  {% endif %}

  {{ sql_header if sql_header is not none }}

  merge into {{ target }} as DBT_INTERNAL_DEST
      using {{ source }} as DBT_INTERNAL_SOURCE
      on {{ predicates | join(' and ') }}
      {% if delete_condition %}
      when matched and (DBT_INTERNAL_SOURCE.{{ delete_condition }}) then delete
      {% endif %}
      when matched then update set
        {% if update_columns -%}{%- for column_name in update_columns %}
            {{ column_name }} = DBT_INTERNAL_SOURCE.{{ column_name }}
            {%- if not loop.last %}, {%- endif %}
        {%- endfor %}
        {%- else %} * {% endif %}
      when not matched {% if delete_condition %}and not (DBT_INTERNAL_SOURCE.{{ delete_condition }}){% endif %} then insert *
{% endmacro %}
