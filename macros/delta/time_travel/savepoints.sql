{#
    dbt run-operation savepoints                                  # every savepoint kept
    dbt run-operation savepoints --args '{model: silver_patients}'

    The savepoints of this lakehouse (privacy.savepoints), or of one model, that are not
    released: name, the relation and version each holds, the business day asked for,
    its copy, who made it and why. Reads only. A savepoint keeps one version of a model
    restorable beyond VACUUM (macro savepoint, privacy/restore).
#}
{% macro savepoints(model=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('savepoints', kwargs, ['model']) -%}
    {{ return(adapter.dispatch('savepoints', 'gdpr_lakehouse')(model)) }}
{%- endmacro %}

{% macro spark__savepoints(model) -%}
    {%- set node = gdpr_lakehouse._delta_node(model, 'savepoints') if model is not none else none -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set kept = gdpr_lakehouse._savepoints_of(node.unique_id if node else none) -%}
    {%- set lines = [] -%}
    {%- for savepoint in kept -%}
        {%- do lines.append([savepoint.name, savepoint.relation_name, savepoint.source_version ~ ' (' ~ savepoint.source_timestamp_text ~ ')',
            savepoint.business_date or '', savepoint.savepoint_relation_name, savepoint.status, savepoint.actor or '', (savepoint.reason or '')[:40]]) -%}
    {%- endfor -%}
    {%- do gdpr_lakehouse.print_table(kept | length ~ ' savepoint(s)' ~ ((' of ' ~ node.schema ~ '.' ~ node.alias) if node else '') ~ ':',
        ['savepoint', 'relation', 'version (UTC)', 'business day', 'copy', 'status', 'actor', 'why'], lines) -%}
    {{ return(lines) }}
{%- endmacro %}

{#- The savepoints not released (status creating or kept; statuses: the ones to
    return), of one node or all, oldest first, as dicts {name, node, relation_name,
    savepoint_relation (a Relation), savepoint_relation_name, source_version,
    source_timestamp_text, business_date, restore_id, status, reason, actor}. Every
    value that names a relation is checked before it reaches SQL: the table is
    writable by whoever can write the privacy schema. No registry yet (a lakehouse
    built before savepoints existed): none, unless the savepoint schema holds tables,
    which then cannot be told apart and stop the caller. A table in the savepoint
    schema that no row accounts for stops the caller too: nothing could erase from it. -#}
{% macro _savepoints_of(node_id=none, statuses=('creating', 'kept')) -%}
    {%- set registry_node = gdpr_lakehouse.engine_node('privacy_savepoints') -%}
    {%- set registry = adapter.get_relation(database=registry_node.database, schema=registry_node.schema, identifier=registry_node.alias)
        if registry_node else none -%}
    {%- set schema = gdpr_lakehouse.savepoint_schema() -%}
    {%- set tables = [] -%}
    {%- if run_query("show schemas like '" ~ schema ~ "'").rows | length > 0 -%}
        {%- for row in run_query('show tables in ' ~ schema) if not row['isTemporary'] -%}
            {%- do tables.append(row['tableName'] | lower) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if registry is none -%}
        {%- if tables -%}
            {%- do exceptions.raise_compiler_error("savepoints: " ~ schema ~ " holds " ~ tables | length ~ " table(s) (" ~ (tables[:3] | join(', '))
                ~ ") but the savepoint registry (privacy.savepoints) does not exist: nothing says whose data they hold. "
                ~ "Run `dbt run --select privacy_savepoints`, or drop the tables") -%}
        {%- endif -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set result = run_query("select savepoint_name, node, relation, savepoint_relation, source_version, cast(source_timestamp as string), "
        ~ "business_date, restore_id, status, reason, actor from " ~ registry ~ " where status in ('creating', 'kept') order by created_at, savepoint_name") -%}
    {%- set found = [] -%}
    {%- set accounted = [] -%}
    {%- for row in result -%}
        {%- set copy = (row[3] or '') | string -%}
        {%- if not modules.re.match('^[a-z][a-z0-9_]{0,63}$', (row[0] or '') | string)
              or not modules.re.match('^[A-Za-z0-9_]+([.][A-Za-z0-9_]+){2,3}$', (row[1] or '') | string)
              or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}[.][A-Za-z_][A-Za-z0-9_]{0,127}$', (row[2] or '') | string)
              or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}[.][A-Za-z_][A-Za-z0-9_]{0,127}$', copy)
              or copy.split('.')[0] | lower != schema | lower -%}
            {%- do exceptions.raise_compiler_error(registry ~ " holds a savepoint row savepoint did not write (name " ~ ((row[0] or '') | string | tojson)[:40]
                ~ ", copy " ~ (copy | tojson)[:80] ~ "); nothing was run. Fix or remove that row by hand") -%}
        {%- endif -%}
        {%- do accounted.append(copy.split('.')[1] | lower) -%}
        {%- if node_id is none or row[1] == node_id -%}
            {%- if row[8] in statuses -%}
                {%- do found.append({
                    'name': row[0],
                    'node': row[1],
                    'relation_name': row[2],
                    'savepoint_relation': api.Relation.create(schema=copy.split('.')[0], identifier=copy.split('.')[1], type='table'),
                    'savepoint_relation_name': copy,
                    'source_version': row[4] | int,
                    'source_timestamp_text': (row[5] or '')[:19],
                    'business_date': row[6],
                    'restore_id': row[7],
                    'status': row[8],
                    'reason': row[9],
                    'actor': row[10],
                }) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set strays = tables | reject('in', accounted) | list -%}
    {%- if strays -%}
        {%- do exceptions.raise_compiler_error("savepoints: " ~ schema ~ "." ~ strays[0] ~ (" and " ~ (strays | length - 1) ~ " other table(s)" if strays | length > 1 else "")
            ~ " is in the savepoint schema but no savepoint in " ~ registry ~ " that is kept holds it: nothing knows whose data it holds, "
            ~ "so no erasure could reach it. Drop it (drop table " ~ schema ~ "." ~ strays[0] ~ "), or register it by making the savepoint again") -%}
    {%- endif -%}
    {{ return(found) }}
{%- endmacro %}

{#- Whether schema.identifier is a table, asked of the catalog itself: dbt's relation
    cache does not see a table this invocation created with run_query. -#}
{% macro _table_exists(schema, identifier) -%}
    {%- if run_query("show schemas like '" ~ schema ~ "'").rows | length == 0 -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(run_query("show tables in " ~ schema ~ " like '" ~ identifier ~ "'").rows | length > 0) }}
{%- endmacro %}
