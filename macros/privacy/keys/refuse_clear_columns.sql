{#- For a model that now encrypts columns an older version of it kept in clear: on an
    incremental run, stop when the existing table still holds any of those clear
    columns (its rows would reach the next layer without a value), naming the command
    that rebuilds it. A no-op on a first run or a full refresh. -#}
{% macro refuse_clear_columns(clear, fix) -%}
    {{ return(adapter.dispatch('refuse_clear_columns', 'gdpr_lakehouse')(clear, fix)) }}
{%- endmacro %}

{% macro spark__refuse_clear_columns(clear, fix) -%}
    {%- if execute and is_incremental() -%}
        {%- set held = adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list -%}
        {%- set found = clear | map('lower') | select('in', held) | list -%}
        {%- if found -%}
            {%- do exceptions.raise_compiler_error(this ~ " was built by a version that kept " ~ found | join(', ')
                ~ " in clear; rebuild it with: " ~ fix) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
