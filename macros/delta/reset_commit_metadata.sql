{# Clear the commit tag set by set_commit_metadata (post-hook on every model). #}
{% macro reset_commit_metadata() -%}
    {{ return(adapter.dispatch('reset_commit_metadata', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__reset_commit_metadata() -%}
    reset spark.databricks.delta.commitInfo.userMetadata
{%- endmacro %}
