{# A model or snapshot named in an operation's arguments: its graph node and its built relation. #}

{#- A model, snapshot (or seed) of this project by name, for an operation that acts on
    its Delta table; a clear error otherwise. -#}
{% macro _delta_node(name, operation, resource_types=('model', 'snapshot')) -%}
    {%- if name is not string or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}$', name) -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": model must be the name of a dbt " ~ resource_types | join(', ')
            ~ " (letters, digits, _), e.g. --args '{model: silver_patients}'; got " ~ (name | tojson)[:80]) -%}
    {%- endif -%}
    {%- set found = [] -%}
    {%- for node in graph.nodes.values()
          if node.resource_type in resource_types and gdpr_lakehouse.in_privacy_scope(node) and node.name == name -%}
        {%- do found.append(node) -%}
    {%- endfor -%}
    {%- if not found -%}
        {%- set known = [] -%}
        {%- for node in graph.nodes.values()
              if node.resource_type in resource_types and gdpr_lakehouse.in_privacy_scope(node)
              and node.config.materialized not in ('view', 'ephemeral') -%}
            {%- do known.append(node.name) -%}
        {%- endfor -%}
        {%- set kinds = resource_types | list -%}
        {%- set kinds_text = ((kinds[:-1] | join(', ')) ~ ' or ' ~ kinds[-1]) if kinds | length > 1 else kinds[0] -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ name ~ " is not a " ~ kinds_text
            ~ " of this project; Delta tables: " ~ (known | sort | join(', '))[:900]) -%}
    {%- endif -%}
    {%- set node = found[0] -%}
    {%- if node.config.materialized in ('view', 'ephemeral') or node.config.get('file_format') != 'delta' -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ name ~ " is " ~ ('a ' ~ node.config.materialized if node.config.materialized in ('view', 'ephemeral')
            else 'stored as ' ~ node.config.get('file_format')) ~ ", not a Delta table: it has no versions to list or restore") -%}
    {%- endif -%}
    {{ return(node) }}
{%- endmacro %}

{#- The node's built relation, checked to be a Delta table. -#}
{% macro _delta_relation_of(node, operation) -%}
    {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
    {%- if relation is none -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ node.schema ~ "." ~ node.alias ~ " (" ~ node.name
            ~ ") does not exist yet; run `dbt build` first") -%}
    {%- endif -%}
    {%- if relation.is_delta is defined and not relation.is_delta -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ relation ~ " is not a Delta table (its catalog entry says otherwise); "
            ~ "only Delta tables have versions") -%}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}
