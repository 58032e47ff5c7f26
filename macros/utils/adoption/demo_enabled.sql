{#
    What an adopting dbt project configures, read and checked in one place. Vars may be
    set at the top level of the adopter's `vars:` or under `vars: {gdpr_lakehouse: ...}`.

      gdpr_lakehouse_demo      true (default) builds this repository's demo lakehouse
                               (landing zone, bronze/silver/gold, masked views, seeds,
                               snapshots and their tests); an adopter sets false.
      gdpr_lakehouse_subjects  where the vault finds data subjects: a list of
                               {source: [source_name, table_name] | ref: model_name,
                                subject_id: <column>, subject_type: <word>}.
      gdpr_lakehouse_schemas   the engine's schemas renamed, e.g.
                               {privacy: crm_privacy, audit: crm_audit}.
#}

{% macro demo_enabled() -%}
    {{ return(adapter.dispatch('demo_enabled', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__demo_enabled() -%}
    {%- set value = var('gdpr_lakehouse_demo', true) -%}
    {%- if value is not sameas true and value is not sameas false -%}
        {%- do exceptions.raise_compiler_error("var gdpr_lakehouse_demo must be true or false; got " ~ (value | tojson)[:40]) -%}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}
