{% macro privacy_contract_problems(nodes, columns_by_node, unbuilt=none, subject_types=none) -%}
    {{ return(adapter.dispatch('privacy_contract_problems', 'gdpr_lakehouse')(nodes, columns_by_node, unbuilt, subject_types)) }}
{%- endmacro %}

{#- unbuilt: ids of nodes whose relation does not exist yet (a first `dbt build` runs
    this test before the models): their columns are only the documented ones, so a
    class naming another column is not yet known to be wrong. subject_types: the types
    the subject feeds key (subject_types()); a subject_type outside them is a problem. -#}
{% macro spark__privacy_contract_problems(nodes, columns_by_node, unbuilt=none, subject_types=none) -%}
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
            {%- set withheld = privacy.get('withheld_from_access') or [] -%}
            {%- if withheld is string or withheld is not iterable or withheld is mapping -%}
                {%- do problems.append([node.unique_id, '', 'meta.privacy.withheld_from_access must be a list of column names']) -%}
            {%- elif node.unique_id not in (unbuilt or []) -%}
                {%- for column in withheld if (column | string | lower) not in columns_by_node.get(node.unique_id, []) | map('lower') | list -%}
                    {%- do problems.append([node.unique_id, column | string, 'is in withheld_from_access but is no column of the node: it would be exported']) -%}
                {%- endfor -%}
            {%- endif -%}
            {%- set kind = privacy.get('subject_type') -%}
            {%- if kind and subject_types is not none and kind not in subject_types -%}
                {%- do problems.append([node.unique_id, '', 'subject_type ' ~ kind ~ ' matches no subject feed (the vault keys: '
                    ~ subject_types | join(', ') ~ '): no erasure request is ever of that type, so its rows would never be erased']) -%}
            {%- endif -%}
            {%- set declared = privacy.get('pii_columns') or [] -%}
            {%- set columns = columns_by_node.get(node.unique_id, []) | map('lower') | list -%}
            {%- for column in columns -%}
                {%- if modules.re.search(pattern, column) and column not in declared -%}
                    {%- do problems.append([node.unique_id, column, 'looks like personal data but is not in pii_columns']) -%}
                {%- endif -%}
            {%- endfor -%}
            {%- do problems.extend(gdpr_lakehouse._column_class_problems(node.unique_id, privacy, columns, pattern,
                node.unique_id not in (unbuilt or []))) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}

{#- The column classes (privacy_column_classes) checked: every column in exactly one of
    the four classes, no other class, no column the node does not have; a subject key,
    a pseudonym or a column that looks like personal data is never non_personal, nor
    is a pii_columns entry. -#}
{% macro _column_class_problems(uid, privacy, columns, pattern, complete=true) -%}
    {%- set problems = [] -%}
    {%- set names = gdpr_lakehouse._privacy_class_names() -%}
    {%- set allowed = names | join(', ') -%}
    {%- set classes = privacy.get('classes') -%}
    {%- if classes is not none and classes is not mapping -%}
        {%- do problems.append([uid, '', 'meta.privacy.classes must map a class (' ~ allowed ~ ') to a list of columns']) -%}
        {%- set classes = {} -%}
    {%- endif -%}
    {%- set seen = {} -%}
    {%- for kind, listed in (classes or {}).items() -%}
        {%- if kind not in names -%}
            {%- do problems.append([uid, '', 'meta.privacy.classes has an unknown class ' ~ (kind | string)[:60] ~ ' (allowed: ' ~ allowed ~ ')']) -%}
        {%- elif listed is string or listed is not iterable or listed is mapping -%}
            {%- do problems.append([uid, '', 'meta.privacy.classes.' ~ kind ~ ' must be a list of column names']) -%}
        {%- else -%}
            {%- for column in listed -%}
                {%- set name = (column | string | lower) -%}
                {%- if name in seen -%}
                    {%- do problems.append([uid, name, 'is in two classes: ' ~ seen[name] ~ ' and ' ~ kind]) -%}
                {%- else -%}
                    {%- do seen.update({name: kind}) -%}
                    {%- if complete and name not in columns -%}
                        {%- do problems.append([uid, name, 'is classed ' ~ kind ~ ' but the node has no such column']) -%}
                    {%- endif -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set key = (privacy.get('subject_key') or '') | lower -%}
    {%- set pii = (privacy.get('pii_columns') or []) | map('lower') | list -%}
    {#- retired_columns: what an older version of the model built and an upgraded table
        keeps (macro retired_columns): not the model's any more, so not classed -#}
    {%- set retired = (privacy.get('retired_columns') or []) | map('lower') | list -%}
    {%- for column in columns -%}
        {%- set kind = seen.get(column) -%}
        {%- if kind is none and column in retired and not modules.re.search(pattern, column) -%}
        {%- elif kind is none -%}
            {%- do problems.append([uid, column, 'has no class in meta.privacy.classes (' ~ allowed ~ ')']) -%}
        {%- elif kind == 'non_personal' and column == key -%}
            {%- do problems.append([uid, column, 'is the subject key but classed non_personal']) -%}
        {%- elif kind == 'non_personal' and column.endswith('pseudonym') -%}
            {%- do problems.append([uid, column, 'is a pseudonym but classed non_personal']) -%}
        {%- elif kind == 'non_personal' and column in pii -%}
            {%- do problems.append([uid, column, 'is in pii_columns but classed non_personal']) -%}
        {%- elif kind == 'non_personal' and modules.re.search(pattern, column) -%}
            {%- do problems.append([uid, column, 'looks like personal data but is classed non_personal']) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}
