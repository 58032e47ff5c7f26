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
    {{ return(adapter.dispatch('pii_column_pattern', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__pii_column_pattern() -%}
    {{ return('(^|_)(full_?name|first_?name|last_?name|surname|given_?name|user_?name|e_?mail|phone|mobile|fax|ip|ip_?address|national_?id|ssn|passport|birth|dob|address|street|postcode|zip_?code)(_|$)') }}
{%- endmacro %}
