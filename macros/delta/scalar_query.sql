{#
    The first value of a one-row query, or the default when nothing runs (parsing,
    linting) or the query returns no row.
#}
{% macro scalar_query(sql, default=none) -%}
    {{ return(adapter.dispatch('scalar_query', 'gdpr_lakehouse')(sql, default)) }}
{%- endmacro %}

{% macro spark__scalar_query(sql, default=none) -%}
    {%- if execute -%}
        {%- set result = run_query(sql) -%}
        {{ return(result.columns[0].values()[0] if result.rows | length > 0 else default) }}
    {%- else -%}
        {{ return(default) }}
    {%- endif -%}
{%- endmacro %}
