{#- One count of a k-anonymous aggregate's cells: the cells, the measures and the
    distinct subjects of `rows` (a relation or a subquery, read as rows), grouped by
    cell, after any filter (`having_rows`: more of the FROM clause, e.g. an anti join,
    applied first, so that the joins never see the rows it leaves out: a join that
    decrypts with the vault's keys must not meet an erased subject) and the joins.
    Used by k_anonymous_aggregate (now and at the version last counted)
    and by its check (k_anonymous_coverage_sql), so both count alike. -#}
{% macro k_anonymous_cells(rows, subject, cells, measures, joins='', having_rows='') -%}
    {{ return(adapter.dispatch('k_anonymous_cells', 'gdpr_lakehouse')(rows, subject, cells, measures, joins, having_rows)) }}
{%- endmacro %}

{% macro spark__k_anonymous_cells(rows, subject, cells, measures, joins='', having_rows='') -%}
    select
        {%- for name, expression in cells %}
        {{ expression }} as {{ name }},
        {%- endfor %}
        {%- for name, expression, type in measures %}
        {{ expression }} as {{ name }},
        {%- endfor %}
        count(distinct rows.{{ subject }}) as subject_count
    from {{ rows }} as rows  -- noqa: AL01,AL05,RF04
    {{ having_rows }}
    {{ joins }}
    group by {% for name, expression in cells %}{{ loop.index }}{% if not loop.last %}, {% endif %}{% endfor %}
{%- endmacro %}
