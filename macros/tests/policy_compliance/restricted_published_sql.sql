{#- Per published subject model, the rows of restricted subjects (one line per model
    that has any); no row when none is published. -#}
{% macro restricted_published_sql(published) -%}
    {{ return(adapter.dispatch('restricted_published_sql', 'gdpr_lakehouse')(published)) }}
{%- endmacro %}

{% macro spark__restricted_published_sql(published) -%}
{%- for model in published %}
select
    '{{ model.relation.schema }}.{{ model.relation.identifier }}' as relation,
    count(*) as rows_of_restricted_subjects
from {{ model.relation }} as published
where not {{ gdpr_lakehouse.not_restricted('published.' ~ adapter.quote(model.key), model.kind) }}
having count(*) > 0
{{ 'union all' if not loop.last }}
{%- endfor %}
{%- if not published %}
select
    cast(null as string) as relation,
    cast(0 as bigint) as rows_of_restricted_subjects
where false
{%- endif %}
{%- endmacro %}
