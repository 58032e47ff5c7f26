{#- The clones the catalog holds of a relation of the erasure plan, made outside the
    plan (`dbt clone` into another schema, CREATE TABLE ... SHALLOW CLONE): a shallow
    clone keeps reading the files its source held when it was made, so an erasure of the
    source leaves the subject readable in it, and nothing erases its own later writes.
    [{relation_name, problem}] (empty: none). Every Delta table of the catalog that is
    not a node or a source of this project's graph is read for a CLONE commit (DESCRIBE
    HISTORY); a table whose detail or history cannot be read stops the check (fail
    closed).
    gdpr_erase and reapply_erasures refuse while one exists, and the compliance test
    no_clone_outside_the_plan fails; the problem names the statement that clears it. -#}
{% macro clone_problems(plan=none) -%}
    {{ return(adapter.dispatch('clone_problems', 'gdpr_lakehouse')(plan)) }}
{%- endmacro %}

{% macro spark__clone_problems(plan=none) -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set plan = plan if plan is not none else gdpr_lakehouse.erasure_plan() -%}
    {%- set planned = {} -%}
    {%- for step in plan -%}
        {%- do planned.update({(step.relation.schema ~ '.' ~ step.relation.identifier) | lower: step.relation_name}) -%}
    {%- endfor -%}
    {#- this project's own relations (and its savepoint copies, in the plan) are not
        clones made outside it -#}
    {%- set own = planned.copy() -%}
    {%- for node in graph.nodes.values() if node.resource_type in ('model', 'snapshot', 'seed') -%}
        {%- do own.update({(node.schema ~ '.' ~ (node.alias or node.name)) | lower: true}) -%}
    {%- endfor -%}
    {%- for source in graph.sources.values() -%}
        {%- do own.update({(source.schema ~ '.' ~ source.identifier) | lower: true}) -%}
    {%- endfor -%}
    {%- set problems = [] -%}
    {%- for schema in run_query('show schemas').columns[0].values() -%}
        {%- set quoted_schema = '`' ~ (schema | replace('`', '``')) ~ '`' -%}
        {%- for row in run_query('show tables in ' ~ quoted_schema) if not row[2] -%}
            {%- set name = (schema ~ '.' ~ row[1]) | lower -%}
            {%- if name not in own -%}
                {%- set relation = quoted_schema ~ '.`' ~ (row[1] | replace('`', '``')) ~ '`' -%}
                {%- set problem = gdpr_lakehouse._clone_problem(relation, name, planned) -%}
                {%- if problem -%}
                    {%- do problems.append({'relation_name': name, 'problem': problem}) -%}
                {%- endif -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}

{#- What is wrong with one table outside the graph: '' when it is no clone of a planned
    relation (or not a Delta table). -#}
{% macro _clone_problem(relation, name, planned) -%}
    {%- set detail = run_query('describe table extended ' ~ relation) -%}
    {%- set provider = [] -%}
    {%- for row in detail if (row[0] | string | trim | lower) == 'provider' -%}
        {%- do provider.append(row[1] | string | trim | lower) -%}
    {%- endfor -%}
    {%- if provider != ['delta'] -%}{{ return('') }}{%- endif -%}
    {%- set history = gdpr_lakehouse.delta_history(relation) -%}
    {%- for commit in history if commit.operation == 'CLONE' -%}
        {%- set source = modules.re.search('source["\']?\\s*(?::|->|=)\\s*["\']?([^"\',}]+)', commit.parameters) -%}
        {%- set source = (source.group(1) if source else '') | replace('`', '') | trim | lower -%}
        {#- by name ([catalog.]schema.table), or by the path of a table the warehouse
            keeps (.../schema.db/table) -#}
        {%- set by_path = modules.re.search('([^/]+)\\.db/([^/]+)/*$', source) -%}
        {%- set parts = source.split('.') -%}
        {%- set source_name = (by_path.group(1) ~ '.' ~ by_path.group(2)) if '/' in source and by_path
            else (parts[-2:] | join('.') if parts | length >= 2 else source) -%}
        {%- if not source -%}
            {#- fail closed: a clone whose source this check cannot read may be of a
                relation the plan erases -#}
            {{ return('a clone (its version ' ~ commit.version ~ ' is the CLONE) whose source cannot be read from its history ('
                ~ commit.parameters[:200] ~ '): it may read files of a relation erasure does not reach. Drop it (DROP TABLE ' ~ name ~ ')') }}
        {%- elif source_name in planned -%}
            {{ return('a clone of ' ~ planned[source_name] ~ ' (its version ' ~ commit.version ~ ' is the CLONE): it reads the files '
                ~ planned[source_name] ~ ' held then, which erasure does not reach. Drop it (DROP TABLE ' ~ name
                ~ '); to keep a copy, take a savepoint (dbt run-operation savepoint), which erasure covers') }}
        {%- endif -%}
    {%- endfor -%}
    {{ return('') }}
{%- endmacro %}

{#- Stop `operation` while a clone of a relation it erases lives outside the plan. -#}
{% macro _refuse_clones(plan, operation) -%}
    {%- set clones = gdpr_lakehouse.clone_problems(plan) -%}
    {%- if clones -%}
        {%- set named = [] -%}
        {%- for clone in clones -%}{%- do named.append(clone.relation_name ~ ': ' ~ clone.problem) -%}{%- endfor -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ clones | length ~ " table(s) outside the erasure plan are clones of relations it erases, and would keep an erased subject readable: "
            ~ named | join('; ') ~ ". Nothing was changed") -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
