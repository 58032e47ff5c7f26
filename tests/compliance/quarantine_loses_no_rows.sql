{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(tags=['compliance']) }}
{#- Silver drops nothing silently: per entity, clean rows + quarantined rows = bronze rows. -#}
{%- set entities = ['patients', 'encounters', 'users', 'clicks', 'orders'] -%}
with counts as (
    {%- for entity in entities %}
    select
        '{{ entity }}' as entity,
        (select count(*) from {{ ref('bronze_' ~ entity) }}) as bronze_rows,
        (select count(*) from {{ ref('silver_' ~ entity) }}) as silver_rows,
        (
            select count(*) from {{ ref('silver_quarantine') }} as quarantine
            where quarantine.entity = '{{ entity }}'
        ) as quarantined_rows
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
)

select *
from counts
where bronze_rows != silver_rows + quarantined_rows
