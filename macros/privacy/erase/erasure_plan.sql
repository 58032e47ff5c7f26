{#
    What erasure touches, read from the dbt graph (no list of tables anywhere): every
    model and snapshot of this project, materialized as a table, whose meta.privacy
    names a subject_key and says on_erasure delete or anonymize, in DAG order (bronze,
    silver, gold, snapshots), then the vault (meta.privacy.role: vault) last.
    Each step: {node, name, relation, schema, identifier, key, key_kind (id|pseudonym),
    subject_type (or none: any), action (delete|anonymize|shred), pii_columns,
    record_ids, depth}. record_ids, for anonymize: the relation's other direct
    identifiers (meta.privacy.classes), source record ids such as an order id, which
    anonymization replaces with their anonymized_record_id (the source links them to
    the person).
    savepoints (default true, when executing): the copies of the savepoints kept
    (privacy.savepoints) come after the relations they copy, each a step like its
    relation's with the copy as relation (and savepoint: its name). A savepoint of a
    node the graph no longer declares stops the plan: nothing says how to erase from it.
#}
{% macro erasure_plan(savepoints=true) -%}
    {{ return(adapter.dispatch('erasure_plan', 'gdpr_lakehouse')(savepoints)) }}
{%- endmacro %}

{% macro spark__erasure_plan(savepoints=true) -%}
    {%- set candidates = [] -%}
    {%- set vault = [] -%}
    {%- for node in graph.nodes.values()
          if node.resource_type in ('model', 'snapshot') and gdpr_lakehouse.in_privacy_scope(node)
          and node.config.materialized not in ('view', 'ephemeral') -%}
        {%- set privacy = (node.config.meta or {}).get('privacy') or {} -%}
        {%- if privacy.get('role') == 'vault' -%}
            {%- do vault.append(gdpr_lakehouse._erasure_step(node, privacy, 'shred', 0)) -%}
        {%- elif privacy.get('on_erasure') in ('delete', 'anonymize') -%}
            {%- do candidates.append(node) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if vault | length != 1 -%}
        {%- do exceptions.raise_compiler_error("erasure_plan: the graph must declare exactly one vault (meta.privacy.role: vault); found " ~ vault | length) -%}
    {%- endif -%}
    {%- set depths = gdpr_lakehouse._dag_depths(candidates) -%}
    {%- set steps = [] -%}
    {%- for node in candidates -%}
        {%- set privacy = node.config.meta.privacy -%}
        {%- do steps.append(gdpr_lakehouse._erasure_step(node, privacy, privacy.on_erasure, depths.get(node.unique_id, 0))) -%}
    {%- endfor -%}
    {%- set ordered = steps | sort(attribute='name') | sort(attribute='depth') -%}
    {%- if savepoints and execute -%}
        {%- set by_node = {} -%}
        {%- for step in ordered -%}{%- do by_node.update({step.node: step}) -%}{%- endfor -%}
        {%- for savepoint in gdpr_lakehouse._savepoints_of() -%}
            {%- set source = graph.nodes.get(savepoint.node) -%}
            {%- if source is none -%}
                {%- do exceptions.raise_compiler_error("erasure_plan: savepoint " ~ savepoint.name ~ " (" ~ savepoint.savepoint_relation_name ~ ") copies "
                    ~ savepoint.node ~ ", which this project no longer declares: nothing says how to erase a subject from it. Release it first: "
                    ~ "dbt run-operation release_savepoint --args '{model: " ~ savepoint.node.split('.')[2] ~ ", name: " ~ savepoint.name ~ "}'") -%}
            {%- endif -%}
            {%- if savepoint.node in by_node -%}
                {%- set step = dict(by_node[savepoint.node]) -%}
                {%- do step.update({'relation': savepoint.savepoint_relation, 'relation_name': savepoint.savepoint_relation_name,
                    'name': savepoint.savepoint_relation.identifier, 'savepoint': savepoint.name, 'depth': step.depth + 1000}) -%}
                {%- do ordered.append(step) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {%- do ordered.append(vault[0]) -%}
    {{ return(ordered) }}
{%- endmacro %}

{% macro _erasure_step(node, privacy, action, depth) -%}
    {%- set identifier_pattern = '^[A-Za-z_][A-Za-z0-9_]{0,127}$' -%}
    {%- set key = privacy.get('subject_key') -%}
    {%- set columns = (privacy.get('pii_columns') or []) if action == 'anonymize' else [] -%}
    {%- set record_ids = [] -%}
    {%- if action == 'anonymize' -%}
        {%- for column in (privacy.get('classes') or {}).get('direct_identifier') or [] if column != key and column not in columns -%}
            {%- do record_ids.append(column) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set names = [key, node.schema, node.alias] + columns + record_ids + ([privacy.subject_type] if privacy.get('subject_type') else []) -%}
    {%- for name in names -%}
        {%- if name is none or not modules.re.match(identifier_pattern, name | string) -%}
            {%- do exceptions.raise_compiler_error("erasure_plan: " ~ node.unique_id ~ " declares " ~ (name | string)[:64]
                ~ " as a subject key, schema, alias or PII column; it must be an identifier (letters, digits, _)") -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set key_kind = privacy.get('subject_key_kind', 'id') -%}
    {%- if key_kind not in ('id', 'pseudonym') -%}
        {%- do exceptions.raise_compiler_error("erasure_plan: " ~ node.unique_id ~ " subject_key_kind is " ~ key_kind ~ "; allowed: id, pseudonym") -%}
    {%- endif -%}
    {%- set relation = api.Relation.create(schema=node.schema, identifier=node.alias) -%}
    {{ return({
        'node': node.unique_id,
        'name': node.name,
        'relation': relation,
        'relation_name': node.schema ~ '.' ~ node.alias,
        'key': key,
        'key_kind': key_kind,
        'subject_type': privacy.get('subject_type'),
        'action': action,
        'pii_columns': columns,
        'record_ids': record_ids,
        'depth': depth,
    }) }}
{%- endmacro %}

{#- Longest path from a root to each of the given nodes (parents before children),
    memoized depth-first over depends_on. -#}
{% macro _dag_depths(nodes) -%}
    {%- set depths = {} -%}
    {%- for node in nodes -%}
        {%- do gdpr_lakehouse._dag_depth(node.unique_id, depths) -%}
    {%- endfor -%}
    {{ return(depths) }}
{%- endmacro %}

{% macro _dag_depth(unique_id, depths) -%}
    {%- if unique_id not in depths -%}
        {%- set node = graph.nodes.get(unique_id) -%}
        {%- set ns = namespace(depth=0) -%}
        {%- for parent in ((node.depends_on.nodes or []) if node else []) -%}
            {%- set ns.depth = [ns.depth, gdpr_lakehouse._dag_depth(parent, depths) | int + 1] | max -%}
        {%- endfor -%}
        {%- do depths.update({unique_id: ns.depth}) -%}
    {%- endif -%}
    {{ return(depths[unique_id]) }}
{%- endmacro %}
