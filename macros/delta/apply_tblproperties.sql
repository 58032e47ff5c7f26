{#
    Post-hook (dbt_project.yml, every model and snapshot): the table's properties are
    the configured ones (the retention policy from vars among them) and the statistics
    list that keeps PII and subject keys out, also on a table that already existed.
    dbt-spark sets tblproperties only when it creates a table, so an incremental model
    or a snapshot would keep the policy of the day it was made for ever: a shortened
    log or file retention would never reach it. A property whose
    value differs is set with one ALTER TABLE (a commit tagged like the build's); a
    table that already has them is not touched. Runs the statement itself and renders
    nothing.
#}
{% macro apply_tblproperties() -%}
    {{ return(adapter.dispatch('apply_tblproperties', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__apply_tblproperties() -%}
    {%- if execute and model is mapping and (model.config.materialized in ('incremental', 'snapshot')) -%}
        {%- set configured = model.config.get('tblproperties') or {} -%}
        {%- set privacy = (model.config.get('meta') or {}).get('privacy') or {} -%}
        {#- and the statistics list that keeps PII and subject keys out (tblproperties_clause) -#}
        {%- set wanted = dict(configured) -%}
        {%- do wanted.update(gdpr_lakehouse._stats_columns_property(privacy, model.columns or {}, configured)) -%}
        {%- set current = gdpr_lakehouse.tblproperties_of(this) if wanted else {} -%}
        {%- set changes = [] -%}
        {%- for name, given in wanted.items() | sort -%}
            {%- set value = (given | string | lower) if given is sameas true or given is sameas false else (given | string) -%}
            {%- if current.get(name) != value -%}
                {%- if not modules.re.match('^[A-Za-z0-9_.]+$', name | string)
                      or "'" in value or '\\' in value or '${' in value -%}
                    {%- do exceptions.raise_compiler_error(this ~ ": tblproperty " ~ (name | string)[:60] ~ " = "
                        ~ value[:60] ~ " is not allowed: names are letters, digits, _ and . ; values may not contain quotes, backslashes or ${") -%}
                {%- endif -%}
                {%- do changes.append("'" ~ name ~ "' = '" ~ value ~ "'") -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if changes -%}
            {%- do run_query('alter table ' ~ this ~ ' set tblproperties (' ~ changes | join(', ') ~ ')') -%}
            {%- do log(this ~ ": table properties set to the configured policy: " ~ changes | join(', '), info=true) -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
