{#- A landing table's rows as this build reads them, with its `_metadata` column: when
    batch_only, only the rows of this build's files, else every file's. This build's
    files are read once per dbt invocation, into a cached global temporary view (macro
    _landing_batch_view) that every reader of the batch (the vault, the delete markers,
    the rejected events, bronze) and the ledger's post-hook read: the ledger records the
    rows the readers read, never a second read that could see a file the first one
    skipped. A model that reads every file (a first build, a full refresh) reads that
    view and the files the ledger already holds, cached together once per invocation
    too. A test or an operation (not a model) reads the files as they are now. A
    relation to select from. -#}
{% macro landing_rows(relation, batch_only) -%}
    {{ return(adapter.dispatch('landing_rows', 'gdpr_lakehouse')(relation, batch_only)) }}
{%- endmacro %}

{% macro spark__landing_rows(relation, batch_only) -%}
    {%- if not batch_only and not (model is mapping and model.get('resource_type') == 'model') -%}
        {{ return(relation) }}
    {%- endif -%}
    {{ return(gdpr_lakehouse._landing_batch_view(relation, whole=not batch_only)) }}
{%- endmacro %}

{#- The global temporary view of this invocation's batch of a landing table (whole:
    the batch and every other file of the table), created and cached the first time a
    node asks for it (eagerly: the files are read now, once; a cached union is also one
    relation to the optimizer). `create_it=false` only names it: the post-hook must read
    what the readers read, never stage afresh. Global: on a cluster each dbt thread has
    its own session. -#}
{% macro _landing_batch_view(relation, create_it=true, whole=false) -%}
    {%- set name = 'gdpr_' ~ ('landing_' if whole else 'batch_') ~ relation.identifier ~ '_' ~ (invocation_id | string | replace('-', '_')) -%}
    {%- if not modules.re.match('^[a-z_][a-z0-9_]*$', name) -%}
        {%- do exceptions.raise_compiler_error("landing_rows: " ~ name[:80] ~ " is not a view name") -%}
    {%- endif -%}
    {%- set view = 'global_temp.' ~ name -%}
    {%- if not execute -%}
        {{ return('(select *, _metadata from ' ~ relation ~ ' where false)') }}
    {%- elif flags.WHICH not in ('run', 'build', 'retry') -%}
        {#- dbt compile or show: the same rows, read where they are; nothing staged that
            no on-run-end would release -#}
        {{ return('(select *, _metadata from ' ~ relation ~ (')' if whole else ' where '
            ~ gdpr_lakehouse.landing_batch_predicate(relation.identifier) ~ ')')) }}
    {%- elif not whole and gdpr_lakehouse.landing_batch_predicate(relation.identifier) == 'false' -%}
        {#- no new file: nothing to read or to stage (Spark reads no file for this) -#}
        {{ return('(select *, _metadata from ' ~ relation ~ ' where false)') }}
    {%- elif not create_it -%}
        {{ return(view) }}
    {%- endif -%}
    {%- set staged = gdpr_lakehouse._invocation_cache().setdefault('landing_batch_views', {}) -%}
    {%- if view not in staged -%}
        {%- if whole -%}
            {%- set query = 'select * from ' ~ gdpr_lakehouse._landing_batch_view(relation)
                ~ ' union all select *, _metadata from ' ~ relation
                ~ ' where not (' ~ gdpr_lakehouse.landing_batch_predicate(relation.identifier) ~ ')' -%}
        {%- else -%}
            {%- set query = 'select *, _metadata from ' ~ relation
                ~ ' where ' ~ gdpr_lakehouse.landing_batch_predicate(relation.identifier) -%}
        {%- endif -%}
        {%- do run_query('create or replace global temporary view ' ~ name ~ ' as ' ~ query) -%}
        {%- do run_query('cache table ' ~ view) -%}
        {%- do staged.update({view: true}) -%}
    {%- endif -%}
    {{ return(view) }}
{%- endmacro %}
