{#- Post-hook of every model (dbt_project.yml), off unless var cluster_after_build is
    true: a relation of the erasure plan keyed by pseudonym is laid out by its key
    after each build, as cluster_by_subject does on a schedule. Its layout
    (meta.privacy.layout: zorder, the default, liquid or none) decides the statements.
    A Z-order rewrites the whole relation every build: on a large table prefer
    liquid, or the schedule. Runs the statements itself and renders nothing. -#}
{% macro cluster_after_build() -%}
    {{ return(adapter.dispatch('cluster_after_build', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__cluster_after_build() -%}
    {%- set on = var('cluster_after_build', false) -%}
    {%- if on is not boolean -%}
        {%- do exceptions.raise_compiler_error("var cluster_after_build is " ~ (on | string)[:40] ~ "; it must be true or false") -%}
    {%- endif -%}
    {%- if execute and on and model is mapping -%}
        {%- for step in gdpr_lakehouse._cluster_steps() if step.node == model.unique_id and step.layout != 'none' and step.has_stats -%}
            {%- for statement in gdpr_lakehouse._cluster_statements(step, run_query('describe detail ' ~ this).rows[0]) -%}
                {%- do run_query(statement) -%}
            {%- endfor -%}
            {%- do log(this ~ ': laid out by ' ~ step.key ~ ' (' ~ step.layout ~ ', var cluster_after_build)', info=true) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
