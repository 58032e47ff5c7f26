{#- A built relation's table properties as a mapping. -#}
{% macro cdf_problems(relations) -%}
    {{ return(adapter.dispatch('cdf_problems', 'gdpr_lakehouse')(relations)) }}
{%- endmacro %}

{% macro spark__cdf_problems(relations) -%}
    {%- set problems = [] -%}
    {%- for name in relations -%}
        {%- set properties = {} -%}
        {%- if adapter.get_relation(database=name.database, schema=name.schema, identifier=name.identifier) is none -%}
            {#- dbt build runs this parent-less test before the models; `dbt test` checks all. -#}
            {%- if flags.WHICH != 'build' -%}
                {%- do problems.append([name | string, 'is not built']) -%}
            {%- endif -%}
        {%- else -%}
            {%- do properties.update(gdpr_lakehouse.tblproperties_of(name)) -%}
            {%- if properties.get('delta.enableChangeDataFeed') != 'true' -%}
                {%- do problems.append([name | string, 'delta.enableChangeDataFeed is ' ~ properties.get('delta.enableChangeDataFeed', 'unset')]) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}
