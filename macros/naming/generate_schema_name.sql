{#
    Layers are schemas: a model configured with `+schema: silver` lands in `silver`,
    not dbt's default `<target_schema>_silver`, so consumers query `silver.patients`.
    Models without a custom schema stay in the target's schema.

    The engine's own schemas (privacy, audit) are renamed for an adopting project by
    var gdpr_lakehouse_schemas, e.g. {privacy: crm_privacy, audit: crm_audit}, where
    they would collide with the adopter's. An adopter with its own
    generate_schema_name decides for every node, the engine's included: the jobs and
    operations read each relation's schema from the graph.
#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- set renamed = var('gdpr_lakehouse_schemas', {}) -%}
    {%- if renamed is not mapping -%}
        {%- do exceptions.raise_compiler_error("var gdpr_lakehouse_schemas must map an engine schema to its name, e.g. {privacy: crm_privacy, audit: crm_audit}; got "
            ~ (renamed | tojson)[:80]) -%}
    {%- endif -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema | trim }}
    {%- elif node.package_name == 'gdpr_lakehouse' and custom_schema_name | trim in renamed -%}
        {%- set name = renamed[custom_schema_name | trim] -%}
        {%- if name is not string or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}$', name) -%}
            {%- do exceptions.raise_compiler_error("var gdpr_lakehouse_schemas: " ~ custom_schema_name ~ " must be renamed to a plain schema name (letters, digits, _); got "
                ~ (name | tojson)[:80]) -%}
        {%- endif -%}
        {{ name }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
