{#
    Checks over the built Delta relations, read from the graph (no list of tables):
    - cdf_problems: every Delta table has the Change Data Feed on, but the vault
      (meta.privacy.role: vault), which must not keep a change feed of keys. A table
      not built yet is a problem under `dbt test`; `dbt build` schedules these
      parent-less tests first, so there it checks the tables that exist.
    - bronze_pii_problems_sql: every PII column of a bronze table (and of silver and
      the snapshots, keyed by pseudonym) that holds subjects is binary ciphertext that
      opens with the subject's own key and with no other key (the vault's reserved
      tombstone key stands in for "any other key").
#}

{% macro delta_table_nodes(layer=none) -%}
    {{ return(adapter.dispatch('delta_table_nodes', 'gdpr_lakehouse')(layer)) }}
{%- endmacro %}

{% macro spark__delta_table_nodes(layer=none) -%}
    {%- set nodes = [] -%}
    {%- for node in gdpr_lakehouse.privacy_contract_nodes()
          if node.config.file_format == 'delta'
          and node.config.materialized not in ('view', 'ephemeral')
          and (layer is none or layer in node.fqn[1:-1]
               or (layer == 'snapshots' and node.resource_type == 'snapshot')) -%}
        {%- do nodes.append(node) -%}
    {%- endfor -%}
    {{ return(nodes) }}
{%- endmacro %}
