{#- var pii_reader_group (Databricks), validated: it reaches SQL and GRANT statements. -#}
{% macro pii_reader_group() -%}
    {{ return(adapter.dispatch('pii_reader_group', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__pii_reader_group() -%}
    {%- set group = var('pii_reader_group', 'pii_readers') | string -%}
    {%- if not modules.re.match('^[A-Za-z0-9_.@ -]{1,128}$', group) -%}
        {%- do exceptions.raise_compiler_error("pii_reader_group " ~ group[:64] ~ " is not a group name") -%}
    {%- endif -%}
    {{ return(group) }}
{%- endmacro %}
