{#
    dbt run-operation release_savepoint --args '{model: silver_patients, name: month_end_2026_01}'

    Drop a savepoint: its copy is dropped (the table and its files), then the erasure
    evidence of the copy is settled as purged (no file of it is left to purge), then
    its row in privacy.savepoints becomes released, with who and when. Idempotent: a
    run that died between them finds the copy gone and settles the rest. (On
    Databricks, a dropped managed table's files stay for UNDROP until the catalog's
    retention deletes them.) The model need
    not be in the project any more (a savepoint of a removed model is released by the
    model's name). Unknown savepoint or a name that is not an identifier: an error,
    nothing changed.
#}
{% macro release_savepoint(model=none, name=none, reason=none) -%}
    {%- do gdpr_lakehouse._reject_unknown_args('release_savepoint', kwargs, ['model', 'name', 'reason']) -%}
    {{ return(adapter.dispatch('release_savepoint', 'gdpr_lakehouse')(model, name, reason)) }}
{%- endmacro %}

{% macro spark__release_savepoint(model, name, reason) -%}
    {%- set reason = gdpr_lakehouse._validate_commit_reason(reason, 'release_savepoint') -%}
    {%- if model is not string or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}$', model) -%}
        {%- do exceptions.raise_compiler_error("release_savepoint: model must be the name of a dbt model or snapshot (letters, digits, _), "
            ~ "e.g. --args '{model: silver_patients, name: month_end_2026_01}'; got " ~ (model | tojson)[:80]) -%}
    {%- endif -%}
    {%- set name = gdpr_lakehouse._validate_savepoint_name(name, 'release_savepoint', model) -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set ctx = gdpr_lakehouse._savepoint_context() -%}
    {%- do gdpr_lakehouse.heal_interrupted_restores(ctx) -%}
    {%- set of_model = [] -%}
    {%- for kept in gdpr_lakehouse._savepoints_of() if kept.node.split('.')[2] == model -%}
        {%- do of_model.append(kept) -%}
    {%- endfor -%}
    {%- set found = of_model | selectattr('name', 'eq', name) | list -%}
    {%- if not found -%}
        {%- do exceptions.raise_compiler_error("release_savepoint: " ~ model ~ " has no savepoint " ~ name ~ "; its savepoints: "
            ~ ((of_model | map(attribute='name') | join(', ')) or 'none') ~ "; nothing was changed") -%}
    {%- endif -%}
    {%- set savepoint = found[0] -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='release_savepoint', reason=reason, extra={'savepoint': name})) -%}
    {%- do run_query('drop table if exists ' ~ savepoint.savepoint_relation) -%}
    {#- the copy's files went with it: what was erased from it is purged -#}
    {%- do run_query("merge into " ~ ctx.evidence ~ " as evidence using (select '" ~ savepoint.savepoint_relation_name ~ "' as relation) as dropped "
        ~ "on evidence.relation = dropped.relation and evidence.status = 'erased' when matched then update set "
        ~ "reorg_at = coalesce(evidence.reorg_at, current_timestamp()), purged_at = coalesce(evidence.purged_at, current_timestamp()), "
        ~ "status = 'purged', detail = concat(evidence.detail, '; copy dropped by release_savepoint')") -%}
    {%- do run_query("update " ~ ctx.savepoints ~ " set status = 'released', released_at = current_timestamp(), released_by = "
        ~ gdpr_lakehouse._sql_string(gdpr_lakehouse._actor()) ~ " where savepoint_name = '" ~ name ~ "' and node = '" ~ savepoint.node
        ~ "' and status in ('creating', 'kept')") -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- do print('release_savepoint: savepoint ' ~ name ~ ' of ' ~ savepoint.relation_name ~ ' (version ' ~ savepoint.source_version
        ~ ') released; its copy ' ~ savepoint.savepoint_relation_name ~ ' is dropped') -%}
    {{ return(savepoint.savepoint_relation_name) }}
{%- endmacro %}
