{#
    Model names carry their layer (`silver_patients`) so they are unique in the dbt
    graph; inside the layer's schema the prefix is redundant, so the relation is
    `silver.patients`. An explicit `alias` config always wins.
#}
{% macro generate_alias_name(custom_alias_name=none, node=none) -%}
    {%- if custom_alias_name -%}
        {{ custom_alias_name | trim }}
    {%- elif node.version -%}
        {{ return(node.name ~ "_v" ~ (node.version | replace(".", "_"))) }}
    {%- else -%}
        {%- set layer = node.config.get('schema') -%}
        {%- if layer and node.name.startswith(layer ~ '_') and node.name | length > layer | length + 1 -%}
            {{ node.name[layer | length + 1:] }}
        {%- else -%}
            {{ node.name }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
