{#- Rows of a masked view where a PII column shows a value to the current principal,
    who is not a PII reader: anything but null, the mask '***', or '***@<domain>'. -#}
{% macro unmasked_pii_sql(views) -%}
    {{ return(adapter.dispatch('unmasked_pii_sql', 'gdpr_lakehouse')(views)) }}
{%- endmacro %}

{% macro spark__unmasked_pii_sql(views) -%}
    {%- set checks = [] -%}
    {%- for view in views -%}
        {%- for column in view.pii_columns -%}
            {%- set check -%}
select '{{ view.relation }}' as relation_name, '{{ column }}' as column_name, count(*) as unmasked_rows
from {{ view.relation }}
where not ({{ gdpr_lakehouse.is_pii_reader() }})
    and {{ adapter.quote(column) }} is not null
    and not (cast({{ adapter.quote(column) }} as string) rlike '^[*]{3}(@[^@]+)?$')
having count(*) > 0
            {%- endset -%}
            {%- do checks.append(check) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- if checks -%}
        {{ return(checks | join('\nunion all\n')) }}
    {%- endif -%}
    {{ return("select cast(null as string) as relation_name, cast(null as string) as column_name, 0 as unmasked_rows where false") }}
{%- endmacro %}
