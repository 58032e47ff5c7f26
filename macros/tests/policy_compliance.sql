{#
    Policy checks over the built relations, each a macro so it can be proven on a
    known-bad fixture (tests/functional/test_compliance.py) and run over the whole
    graph by a singular test in tests/compliance/ (a model added tomorrow is covered
    without anyone remembering to attach a test to it).
    - retention_problems: every Delta table keeps removed files and log entries no
      longer than the erasure deadline (var erasure_deadline_days, default 30): an
      erased row's old file, its change data, its log statistics must be deletable in
      time. Both properties must be set (Delta's defaults are not a policy).
    - statistics_problems: no PII column is in a table's Delta statistics (the log's
      min/max would keep plaintext or ciphertext beside every file, for 30 days).
    - overdue_requests_sql: open erasure requests past their deadline.
    - unmasked_pii_sql: a masked view shows a PII value to someone who is not a PII reader.
#}

{#- relations: [relation]; problems as [relation, property, problem]. -#}
{% macro retention_problems(relations, max_days=none) -%}
    {%- set days = max_days if max_days is not none else var('erasure_deadline_days', 30) | int -%}
    {%- set problems = [] -%}
    {%- for relation in relations
          if adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier) is not none -%}
        {%- set properties = gdpr_lakehouse.tblproperties_of(relation) -%}
        {%- for name in ['delta.deletedFileRetentionDuration', 'delta.logRetentionDuration'] -%}
            {%- set value = properties.get(name) -%}
            {%- set hours = gdpr_lakehouse._retention_hours(value) -%}
            {%- if value is none -%}
                {%- do problems.append([relation | string, name, 'is not set (the policy needs it explicit)']) -%}
            {%- elif hours is none -%}
                {%- do problems.append([relation | string, name, value ~ ' is not an interval']) -%}
            {%- elif hours > days * 24 -%}
                {%- do problems.append([relation | string, name, value ~ ' is longer than the erasure deadline of ' ~ days ~ ' days']) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}

{#- specs: [{relation, pii_columns}]; problems as [relation, column, problem]. -#}
{% macro statistics_problems(specs) -%}
    {%- set problems = [] -%}
    {%- for spec in specs
          if spec.pii_columns
          and adapter.get_relation(database=spec.relation.database, schema=spec.relation.schema, identifier=spec.relation.identifier) is not none -%}
        {%- set properties = gdpr_lakehouse.tblproperties_of(spec.relation) -%}
        {%- set listed = properties.get('delta.dataSkippingStatsColumns') -%}
        {%- if listed is not none -%}
            {%- set columns = listed.split(',') | map('trim') | map('lower') | list -%}
            {%- for column in spec.pii_columns if column | lower in columns -%}
                {%- do problems.append([spec.relation | string, column, 'is in delta.dataSkippingStatsColumns']) -%}
            {%- endfor -%}
        {%- elif (properties.get('delta.dataSkippingNumIndexedCols', '32') | int) != 0 -%}
            {%- for column in spec.pii_columns -%}
                {%- do problems.append([spec.relation | string, column, 'may be in the statistics: set delta.dataSkippingStatsColumns without it']) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}

{% macro statistics_specs_from_graph() -%}
    {%- set specs = [] -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes() -%}
        {%- set pii = (((node.config.meta or {}).get('privacy') or {}).get('pii_columns')) or [] -%}
        {%- do specs.append({'relation': api.Relation.create(schema=node.schema, identifier=node.alias), 'pii_columns': pii}) -%}
    {%- endfor -%}
    {{ return(specs) }}
{%- endmacro %}

{% macro delta_relations_from_graph() -%}
    {%- set relations = [] -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes() -%}
        {%- do relations.append(api.Relation.create(schema=node.schema, identifier=node.alias)) -%}
    {%- endfor -%}
    {{ return(relations) }}
{%- endmacro %}

{#- Open requests (pending, erasing, failed) past their deadline; held ones are lawful
    (Art. 17(3)) and listed by the GDPR report instead. -#}
{% macro overdue_requests_sql(requests) -%}
select
    request_id,
    status,
    received_at,
    deadline,
    datediff(current_timestamp(), deadline) as days_overdue
from {{ requests }}
where status in {{ gdpr_lakehouse.request_status_in('open') }}
    and deadline < current_timestamp()
{%- endmacro %}

{#- Rows of a masked view where a PII column shows a value to the current principal,
    who is not a PII reader: anything but null, the mask '***', or '***@<domain>'. -#}
{% macro unmasked_pii_sql(views) -%}
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

{#- The masked views: views of this project that declare pii_columns. -#}
{% macro masked_views_from_graph() -%}
    {%- set views = [] -%}
    {%- for node in gdpr_lakehouse.privacy_contract_nodes() if node.config.materialized == 'view' -%}
        {%- set pii = (((node.config.meta or {}).get('privacy') or {}).get('pii_columns')) or [] -%}
        {%- if pii and adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) is not none -%}
            {%- do views.append({'relation': api.Relation.create(schema=node.schema, identifier=node.alias), 'pii_columns': pii}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(views) }}
{%- endmacro %}
