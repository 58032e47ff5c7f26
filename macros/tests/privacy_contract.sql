{#
    The privacy contract: every model, seed and snapshot declares
    meta.privacy {subject_key, on_erasure: delete|anonymize|retain, pii_columns}, and
    every column that looks like personal data is listed in pii_columns.
    privacy_contract_problems() is pure (graph nodes + their columns in, problems out)
    so it can be proven on known-bad fixtures; the singular test
    tests/compliance/privacy_contract_coverage.sql runs it over the real graph and the
    columns of the built relations.
#}

{% macro pii_column_pattern() -%}
    {{ return('(^|_)(full_?name|first_?name|last_?name|surname|given_?name|user_?name|e_?mail|phone|mobile|fax|ip|ip_?address|national_?id|ssn|passport|birth|dob|address|street|postcode|zip_?code)(_|$)') }}
{%- endmacro %}

{% macro privacy_contract_problems(nodes, columns_by_node) -%}
    {%- set problems = [] -%}
    {%- set pattern = gdpr_lakehouse.pii_column_pattern() -%}
    {%- for node in nodes -%}
        {%- set privacy = (node.config.meta or {}).get('privacy') -%}
        {%- if not privacy -%}
            {%- do problems.append([node.unique_id, '', 'declares no meta.privacy']) -%}
        {%- else -%}
            {%- set on_erasure = privacy.get('on_erasure') -%}
            {%- if on_erasure not in ('delete', 'anonymize', 'retain') -%}
                {%- do problems.append([node.unique_id, '', 'on_erasure must be delete, anonymize or retain']) -%}
            {%- endif -%}
            {%- if on_erasure in ('delete', 'anonymize') and not privacy.get('subject_key') -%}
                {%- do problems.append([node.unique_id, '', 'on_erasure ' ~ on_erasure ~ ' needs a subject_key']) -%}
            {%- endif -%}
            {%- set declared = privacy.get('pii_columns') or [] -%}
            {%- for column in columns_by_node.get(node.unique_id, []) -%}
                {%- if modules.re.search(pattern, column | lower) and column | lower not in declared -%}
                    {%- do problems.append([node.unique_id, column | lower, 'looks like personal data but is not in pii_columns']) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}

{#- Columns as built (the relation in the warehouse) and as documented (yml). -#}
{% macro node_columns(node) -%}
    {%- set names = [] -%}
    {%- for name in node.columns -%}{%- do names.append(name | lower) -%}{%- endfor -%}
    {%- if execute and node.config.materialized != 'ephemeral' -%}
        {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
        {%- if relation is not none -%}
            {%- for column in adapter.get_columns_in_relation(relation) if column.name | lower not in names -%}
                {%- do names.append(column.name | lower) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(names) }}
{%- endmacro %}

{#- Problems as rows: the shape a dbt test returns (no rows = pass). -#}
{% macro problems_as_rows(problems, names) -%}
    {%- if problems -%}
        select * from values
        {%- for problem in problems %}
            ({% for value in problem %}'{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}'{{ ', ' if not loop.last }}{% endfor %}){{ ',' if not loop.last }}
        {%- endfor %}
        as problems({{ names | join(', ') }})
    {%- else -%}
        select {% for name in names %}cast(null as string) as {{ name }}{{ ', ' if not loop.last }}{% endfor %}
        where false
    {%- endif -%}
{%- endmacro %}
