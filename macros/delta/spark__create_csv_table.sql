{#
    dbt-spark's seed table, plus the table properties the project sets on every Delta
    relation (CDF, deletion vectors, retention). dbt-spark 1.10 leaves
    tblproperties_clause() out of seeds, so the seed's first commits would escape the
    Change Data Feed. A Delta seed is created with CREATE OR REPLACE, which keeps the
    table (its id, history and Change Data Feed) across reloads; see
    spark__reset_csv_table below. Otherwise identical to dbt-spark's.
#}
{% macro spark__create_csv_table(model, agate_table) %}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}

  {% set sql %}
    create {{ 'or replace ' if config.get('file_format') == 'delta' }}table {{ this.render() }} (
        {%- for col_name in agate_table.column_names -%}
            {%- set inferred_type = adapter.convert_type(agate_table, loop.index0) -%}
            {%- set type = column_override.get(col_name, inferred_type) -%}
            {%- set column_name = (col_name | string) -%}
            {{ adapter.quote_seed_column(column_name, quote_seed_column) }} {{ type }} {%- if not loop.last -%}, {%- endif -%}
        {%- endfor -%}
    )
    {{ file_format_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {{ clustered_cols(label="clustered by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
    {{ tblproperties_clause() }}
  {% endset %}

  {% call statement('_') -%}
    {{ sql }}
  {%- endcall %}

  {{ return(sql) }}
{% endmacro %}

{#
    dbt-spark drops a seed's table before every reload. For Delta that throws away the
    table's history and Change Data Feed (a new table id, versions from 0 again), so
    nothing could audit or restore a seed; CREATE OR REPLACE (spark__create_csv_table)
    replaces the contents in one commit instead. Other formats are dropped as before.
#}
{% macro spark__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
    {% if old_relation and config.get('file_format') != 'delta' %}
        {{ adapter.drop_relation(old_relation) }}
    {% endif %}
    {% set sql = create_csv_table(model, agate_table) %}
    {{ return(sql) }}
{% endmacro %}
