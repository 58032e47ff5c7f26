{#- Problems as rows: the shape a dbt test returns (no rows = pass). -#}
{% macro problems_as_rows(problems, names) -%}
    {{ return(adapter.dispatch('problems_as_rows', 'gdpr_lakehouse')(problems, names)) }}
{%- endmacro %}

{% macro spark__problems_as_rows(problems, names) -%}
    {%- if problems -%}
        select * from values
        {%- for problem in problems %}
            ({% for value in problem %}'{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}'{{ ', ' if not loop.last }}{% endfor %}){{ ',' if not loop.last }}
        {%- endfor %}
        as problems({{ names | join(', ') }})
    {%- else -%}
        select {% for name in names %}cast(null as string) as {{ name }}{{ ', ' if not loop.last }}{% endfor %}
        where false
    {%- endif -%}
{%- endmacro %}
