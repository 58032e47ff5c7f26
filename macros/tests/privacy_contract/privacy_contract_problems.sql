{% macro privacy_contract_problems(nodes, columns_by_node) -%}
    {{ return(adapter.dispatch('privacy_contract_problems', 'gdpr_lakehouse')(nodes, columns_by_node)) }}
{%- endmacro %}

{% macro spark__privacy_contract_problems(nodes, columns_by_node) -%}
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
