{#- Print rows (lists of cells) as an aligned text table under a title. -#}
{% macro print_table(title, header, lines) -%}
    {{ return(adapter.dispatch('print_table', 'gdpr_lakehouse')(title, header, lines)) }}
{%- endmacro %}

{% macro spark__print_table(title, header, lines) -%}
    {%- set rows = [header] -%}
    {%- for line in lines -%}
        {%- set cells = [] -%}
        {%- for cell in line -%}{%- do cells.append('' if cell is none else cell | string) -%}{%- endfor -%}
        {%- do rows.append(cells) -%}
    {%- endfor -%}
    {%- set widths = [] -%}
    {%- for column in range(header | length) -%}
        {%- set cells = [] -%}
        {%- for row in rows -%}{%- do cells.append(row[column] | length) -%}{%- endfor -%}
        {%- do widths.append(cells | max) -%}
    {%- endfor -%}
    {%- do print('') -%}
    {%- do print(title) -%}
    {%- for row in rows -%}
        {%- set cells = [] -%}
        {%- for column in range(header | length) -%}
            {%- do cells.append(row[column].ljust(widths[column])) -%}
        {%- endfor -%}
        {%- do print('  ' ~ (cells | join('  ')) | trim) -%}
    {%- endfor -%}
{%- endmacro %}
