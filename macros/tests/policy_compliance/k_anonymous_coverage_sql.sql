{#
    The rows where a k-anonymous aggregate (macro k_anonymous_aggregate) does not cover
    its upstream as it is now, as (relation_name, cell, problem), the cell as JSON: a
    published cell holding fewer of a measure or of subjects than the upstream holds in
    it (it may hold more: the subjects erased since it was published), more subjects
    than rows, or a cell of at least var k_anonymity subjects in the upstream that is
    not published. The same spec as the model's (macro demo_retained_aggregate).
#}
{% macro k_anonymous_coverage_sql(aggregate, upstream, subject, cells, measures, joins='', subject_kind='pseudonym') -%}
    {{ return(adapter.dispatch('k_anonymous_coverage_sql', 'gdpr_lakehouse')(aggregate, upstream, subject, cells, measures, joins, subject_kind)) }}
{%- endmacro %}

{% macro spark__k_anonymous_coverage_sql(aggregate, upstream, subject, cells, measures, joins='', subject_kind='pseudonym') -%}
    {%- set names = cells | map(attribute=0) | list -%}
    {%- set sums = (measures | map(attribute=0) | list) + ['subject_count'] -%}
    {%- set k = gdpr_lakehouse.k_anonymity() %}
select
    '{{ aggregate }}' as relation_name,
    to_json(named_struct({% for name in names %}'{{ name }}', coalesce(published.{{ name }}, recounted.{{ name }}){% if not loop.last %}, {% endif %}{% endfor %})) as cell,
    case
        when published.subject_count is null
            then concat('not published, though the upstream has ', recounted.subject_count, ' subjects in it (k = {{ k }})')
        when published.subject_count > published.{{ measures[0][0] }}
            then concat('more subjects (', published.subject_count, ') than {{ measures[0][0] }} (', published.{{ measures[0][0] }}, ')')
        {%- for name in sums %}
        when published.{{ name }} < coalesce(recounted.{{ name }}, 0)
            then concat('{{ name }} ', published.{{ name }}, ' below the upstream''s ', recounted.{{ name }})
        {%- endfor %}
    end as problem
from {{ aggregate }} as published
full outer join (
    {{ gdpr_lakehouse.k_anonymous_cells(upstream, subject, cells, measures, joins) }}
) as recounted
    on {% for name in names %}{% if not loop.first %} and {% endif %}published.{{ name }} <=> recounted.{{ name }}{% endfor %}
where
    (published.subject_count is null and recounted.subject_count >= {{ k }})
    or published.subject_count > published.{{ measures[0][0] }}
    {%- for name in sums %}
    or published.{{ name }} < coalesce(recounted.{{ name }}, 0)
    {%- endfor %}
{%- endmacro %}
