{#- The pattern a landing column's values must match, from the column's meta
    `valid: {pattern: ...}` in the landing source's yml: the one rule the silver checks
    and the rectification job share. Fails closed: a column without a pattern, or one
    that could not be quoted into SQL (a quote or backslash), stops the compilation. -#}
{% macro landing_column_pattern(table, column) -%}
    {{ return(adapter.dispatch('landing_column_pattern', 'gdpr_lakehouse')(table, column)) }}
{%- endmacro %}

{% macro spark__landing_column_pattern(table, column) -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set found = [] -%}
    {%- for source in graph.sources.values()
          if source.source_meta.get('landing_format') and source.name == table and column in source.columns -%}
        {%- set declared = source.columns[column] -%}
        {%- set meta = declared.get('meta') or (declared.get('config') or {}).get('meta') or {} -%}
        {%- do found.append((meta.get('valid') or {}).get('pattern')) -%}
    {%- endfor -%}
    {%- if found | length != 1 or found[0] is not string or not found[0]
          or "'" in found[0] or '\\' in found[0] -%}
        {%- do exceptions.raise_compiler_error("landing_column_pattern: landing table " ~ table ~ " column " ~ column
            ~ " must declare one meta valid.pattern without quotes or backslashes (found " ~ (found | tojson)[:120] ~ ")") -%}
    {%- endif -%}
    {{ return(found[0]) }}
{%- endmacro %}
