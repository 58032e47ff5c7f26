{#
    dbt-spark's MERGE, plus change-data-capture deletes. A model whose config sets
    `cdc_delete_condition` (a boolean over the source's columns, e.g.
    "source_op = 'delete'") gets
        when matched and <condition> then delete
        when matched then update set ...
        when not matched and not (<condition>) then insert *
    so one MERGE applies inserts, updates and deletes of a CDC batch (shared reference
    000's upsert). With `cdc_sequence_by` too (a list of the target's columns, e.g.
    [source_seq, source_op_rank, source_file, source_row]) both matched clauses
    apply only when the event's sequence is greater than the row's (compared in list
    order): a late, replayed or stale event never overwrites a newer state. With
    `merge_insert_only: true`, only `when not matched then insert *`: a row is never
    changed, and the MERGE reads the table it writes, so a concurrent writer of the same
    keys fails instead of adding a second row (the vault: one key per subject). Without
    these, identical to dbt-spark's spark__get_merge_sql.
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
  {%- set insert_only = config.get('merge_insert_only', false) -%}
  {%- if insert_only not in (true, false) or (insert_only and delete_condition) -%}
      {%- do exceptions.raise_compiler_error("merge_insert_only must be true or false, and true only without cdc_delete_condition") -%}
  {%- endif -%}
  {%- set sequence_by = config.get('cdc_sequence_by') or [] -%}
  {%- set newer = [] -%}
  {%- if sequence_by -%}
      {%- if sequence_by is string or not delete_condition -%}
          {%- do exceptions.raise_compiler_error("cdc_sequence_by must be a list of column names, used with cdc_delete_condition") -%}
      {%- endif -%}
      {%- for column in sequence_by -%}
          {%- if not modules.re.match('^[A-Za-z_][A-Za-z0-9_]*$', column | string) -%}
              {%- do exceptions.raise_compiler_error("cdc_sequence_by: " ~ (column | string)[:64] ~ " is not a column name (letters, digits, _)") -%}
          {%- endif -%}
      {%- endfor -%}
      {%- set source_sequence = [] -%}
      {%- set dest_sequence = [] -%}
      {%- for column in sequence_by -%}
          {%- do source_sequence.append("'" ~ column ~ "', DBT_INTERNAL_SOURCE." ~ column) -%}
          {%- do dest_sequence.append("'" ~ column ~ "', DBT_INTERNAL_DEST." ~ column) -%}
      {%- endfor -%}
      {%- do newer.append(' and named_struct(' ~ source_sequence | join(', ') ~ ') > named_struct(' ~ dest_sequence | join(', ') ~ ')') -%}
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
      {% if not insert_only %}
      {% if delete_condition %}
      when matched and (DBT_INTERNAL_SOURCE.{{ delete_condition }}){{ newer | join }} then delete
      {% endif %}
      when matched{{ newer | join }} then update set
        {% if update_columns -%}{%- for column_name in update_columns %}
            {{ column_name }} = DBT_INTERNAL_SOURCE.{{ column_name }}
            {%- if not loop.last %}, {%- endif %}
        {%- endfor %}
        {%- else %} * {% endif %}
      {% endif %}
      when not matched {% if delete_condition %}and not (DBT_INTERNAL_SOURCE.{{ delete_condition }}){% endif %} then insert *
{% endmacro %}
