{# Every file under the landing zone (binaryFile: path, length, modificationTime). #}
{% macro landing_files_relation() -%}
    {{ return(adapter.dispatch('landing_files_relation', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__landing_files_relation() -%}
    {{ return(api.Relation.create(schema='landing', identifier='landing_files')) }}
{%- endmacro %}
