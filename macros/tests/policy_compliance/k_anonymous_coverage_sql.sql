{#
    The rows where a k-anonymous aggregate (macro k_anonymous_aggregate) does not cover
    its upstream as it is now: a published cell holding fewer of a measure or of
    subjects than the upstream holds in it (it may hold more: the subjects erased since
    it was published), more subjects than rows, or a cell of at least var k_anonymity
    subjects in the upstream that is not published. The same upstream, subject, cells,
    measures and joins as the model's; measures' sums must never be negative.
#}
{% macro k_anonymous_coverage_sql(aggregate, upstream, subject, cells, measures, joins='') -%}
    {{ return(adapter.dispatch('k_anonymous_coverage_sql', 'gdpr_lakehouse')(aggregate, upstream, subject, cells, measures, joins)) }}
{%- endmacro %}

{% macro spark__k_anonymous_coverage_sql(aggregate, upstream, subject, cells, measures, joins='') -%}
    {%- set names = cells | map(attribute=0) | list -%}
    {%- set sums = (measures | map(attribute=0) | list) + ['subject_count'] %}
with published as (
    select * from {{ aggregate }}
),

recounted as (
    select
        {%- for name, expression in cells %}
        {{ expression }} as {{ name }},
        {%- endfor %}
        {%- for name, expression, type in measures %}
        {{ expression }} as {{ name }},
        {%- endfor %}
        count(distinct rows.{{ subject }}) as subject_count
    from {{ upstream }} as rows
    {{ joins }}
    group by {% for name in names %}{{ loop.index }}{% if not loop.last %}, {% endif %}{% endfor %}
),

differences as (
    select
        {%- for name in names %}
        coalesce(published.{{ name }}, recounted.{{ name }}) as {{ name }},
        {%- endfor %}
        {%- for name in sums %}
        published.{{ name }} as published_{{ name }},
        recounted.{{ name }} as upstream_{{ name }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from published
    full outer join recounted
        on {% for name in names %}{% if not loop.first %} and {% endif %}published.{{ name }} <=> recounted.{{ name }}{% endfor %}
    where
        (published.subject_count is null and recounted.subject_count >= {{ gdpr_lakehouse.k_anonymity() }})
        or published.subject_count > published.{{ measures[0][0] }}
        {%- for name in sums %}
        or published.{{ name }} < coalesce(recounted.{{ name }}, 0)
        {%- endfor %}
)

select * from differences
{%- endmacro %}
