{#- A dict that lives as long as one node's Jinja context (its compile, or its
    execution: dbt renders each afresh), for a read that a node repeats and that no
    statement of the node changes, e.g. one query for the five landing tables' batch
    files instead of five. none outside a node's context: an operation (gdpr_erase,
    restore_version) or a hook renders once and writes between its reads. none too in
    the node that builds `read` (the relation the memo would answer for): it writes
    what it reads. -#}
{% macro _node_memo(read) -%}
    {%- if model is mapping and model.get('resource_type') in ('model', 'snapshot', 'seed', 'test')
          and (model.get('alias') | lower, model.get('schema') | lower) != (read.identifier | lower, read.schema | lower) -%}
        {%- if '_gdpr_lakehouse_memo' not in model -%}
            {%- do model.update({'_gdpr_lakehouse_memo': {}}) -%}
        {%- endif -%}
        {{ return(model['_gdpr_lakehouse_memo']) }}
    {%- endif -%}
    {{ return(none) }}
{%- endmacro %}

{#- A dict kept for the current dbt invocation (keyed by invocation_id in the graph
    dbt shares between every node and macro of one invocation); a fresh one where there
    is no graph to keep it in. -#}
{% macro _invocation_cache() -%}
    {%- if graph is not mapping -%}{{ return({}) }}{%- endif -%}
    {%- set caches = graph.setdefault('gdpr_lakehouse_invocation_cache', {}) -%}
    {{ return(caches.setdefault(invocation_id | string, {})) }}
{%- endmacro %}
