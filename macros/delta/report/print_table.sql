{#- Print rows (lists of cells) as an aligned text table under a title. -#}
{% macro print_table(title, header, lines, limit=none, rest=none) -%}
    {{ return(adapter.dispatch('print_table', 'gdpr_lakehouse')(title, header, lines, limit, rest)) }}
{%- endmacro %}

{% macro spark__print_table(title, header, lines, limit=none, rest=none) -%}
    {%- set rows = [header] -%}
    {%- set hidden = (lines | length - limit) if limit is not none and lines | length > limit else 0 -%}
    {%- for line in (lines[:limit] if hidden else lines) -%}
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
    {%- if hidden -%}
        {%- do print('  ... and ' ~ hidden ~ ' more' ~ ((' (' ~ rest ~ ')') if rest else '')) -%}
    {%- endif -%}
{%- endmacro %}
