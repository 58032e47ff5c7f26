{#
    Policy checks over the built relations, each a macro so it can be proven on a
    known-bad fixture (tests/functional/test_compliance.py) and run over the whole
    graph by a singular test in tests/compliance/ (a model added tomorrow is covered
    without anyone remembering to attach a test to it).
    - retention_problems: every Delta table keeps removed files and log entries no
      longer than the erasure deadline (var request_deadline, one month taken as 30
      days; or its number of days): an
      erased row's old file, its change data, its log statistics must be deletable in
      time. Both properties must be set (Delta's defaults are not a policy).
    - statistics_problems: no PII column is in a table's Delta statistics (the log's
      min/max would keep plaintext or ciphertext beside every file, for 30 days).
    - overdue_requests_sql: open erasure requests past their deadline.
    - unmasked_pii_sql: a masked view shows a PII value to someone who is not a PII reader.
#}

{#- relations: [relation]; problems as [relation, property, problem]. -#}
{% macro retention_problems(relations, max_days=none) -%}
    {{ return(adapter.dispatch('retention_problems', 'gdpr_lakehouse')(relations, max_days)) }}
{%- endmacro %}

{% macro spark__retention_problems(relations, max_days=none) -%}
    {%- set days = max_days if max_days is not none else gdpr_lakehouse._request_deadline_policy().days -%}
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
