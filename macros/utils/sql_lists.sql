{# Lists of values already validated, as SQL. #}

{% macro _subject_filter(ids, column='subject_id') -%}
    {%- if ids -%}{{ return(' and ' ~ column ~ ' in (' ~ gdpr_lakehouse._sql_list(ids) ~ ')') }}{%- endif -%}
    {{ return('') }}
{%- endmacro %}

{% macro _sql_list(values) -%}
    {%- set quoted = [] -%}
    {%- for value in values -%}{%- do quoted.append(gdpr_lakehouse._sql_string(value)) -%}{%- endfor -%}
    {{ return(quoted | join(', ')) }}
{%- endmacro %}
