{#
    Checks over the built Delta relations, read from the graph (no list of tables):
    - cdf_problems: every Delta table has the Change Data Feed on, but the vault
      (meta.privacy.role: vault), which must not keep a change feed of keys. A table
      not built yet is a problem under `dbt test`; `dbt build` schedules these
      parent-less tests first, so there it checks the tables that exist.
    - bronze_pii_problems_sql: every PII column of a bronze table that holds subject
      ids is binary ciphertext that opens with the subject's own key and with no
      other key (the vault's reserved tombstone key stands in for "any other key").
#}

{% macro delta_table_nodes(layer=none) -%}
    {%- set nodes = [] -%}
    {%- for node in gdpr_lakehouse.privacy_contract_nodes()
          if node.config.file_format == 'delta'
          and node.config.materialized not in ('view', 'ephemeral')
          and (layer is none or node.fqn[1] == layer) -%}
        {%- do nodes.append(node) -%}
    {%- endfor -%}
    {{ return(nodes) }}
{%- endmacro %}

{#- A built relation's table properties as a mapping. -#}
{% macro cdf_problems(relations) -%}
    {%- set problems = [] -%}
    {%- for name in relations -%}
        {%- set properties = {} -%}
        {%- if adapter.get_relation(database=name.database, schema=name.schema, identifier=name.identifier) is none -%}
            {#- dbt build runs this parent-less test before the models; `dbt test` checks all. -#}
            {%- if flags.WHICH != 'build' -%}
                {%- do problems.append([name | string, 'is not built']) -%}
            {%- endif -%}
        {%- else -%}
            {%- do properties.update(gdpr_lakehouse.tblproperties_of(name)) -%}
            {%- if properties.get('delta.enableChangeDataFeed') != 'true' -%}
                {%- do problems.append([name | string, 'delta.enableChangeDataFeed is ' ~ properties.get('delta.enableChangeDataFeed', 'unset')]) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}

{% macro cdf_relations_from_graph() -%}
    {%- set relations = [] -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes()
          if ((node.config.meta or {}).get('privacy') or {}).get('role') not in ('vault', 'system', 'audit') -%}
        {%- do relations.append(api.Relation.create(schema=node.schema, identifier=node.alias)) -%}
    {%- endfor -%}
    {{ return(relations) }}
{%- endmacro %}

{#- One row per (relation, column) whose values are not ciphertext under the subject's
    key. relation_specs: [{relation, subject_key, pii_columns}]. -#}
{% macro bronze_pii_problems_sql(relation_specs) -%}
    {%- set vault = ref('privacy_subject_keys') -%}
    {%- set checks = [] -%}
    {%- for spec in relation_specs -%}
        {%- for column in spec.pii_columns -%}
            {%- if spec.get('missing') -%}
            {%- set check -%}
            select '{{ spec.relation }}' as relation_name, '{{ column }}' as column_name, -1 as bad_rows
            {%- endset -%}
            {%- else -%}
            {%- set check -%}
            select
                '{{ spec.relation }}' as relation_name,
                '{{ column }}' as column_name,
                count(*) as bad_rows
            from {{ spec.relation }} as data
            left join {{ vault }} as vault on data.{{ spec.subject_key }} = vault.subject_id
            where data.{{ column }} is not null
                and (
                    typeof(data.{{ column }}) != 'binary'
                    or try_aes_decrypt(cast(data.{{ column }} as binary), {{ gdpr_lakehouse.unwrap_key('vault.data_key') }}, 'GCM') is null
                    or try_aes_decrypt(cast(data.{{ column }} as binary), {{ gdpr_lakehouse.tombstone_key() }}, 'GCM') is not null
                )
            having count(*) > 0
            {%- endset -%}
            {%- endif -%}
            {#- dbt build runs this test before bronze exists; `dbt test` reports it. -#}
            {%- if not spec.get('missing') or flags.WHICH != 'build' -%}
                {%- do checks.append(check) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- if checks -%}
        {{ checks | join('\nunion all\n') }}
    {%- else -%}
        select cast(null as string) as relation_name, cast(null as string) as column_name, 0 as bad_rows where false
    {%- endif -%}
{%- endmacro %}

{% macro bronze_pii_specs_from_graph() -%}
    {%- set specs = [] -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes('bronze') -%}
        {%- set privacy = (node.config.meta or {}).get('privacy') or {} -%}
        {%- if privacy.get('pii_columns') and privacy.get('subject_key') -%}
            {%- do specs.append({
                'relation': api.Relation.create(schema=node.schema, identifier=node.alias),
                'missing': adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) is none,
                'subject_key': privacy['subject_key'],
                'pii_columns': privacy['pii_columns']}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(specs) }}
{%- endmacro %}
