{{ config(unique_key='department_id') }}

with departments as (
    select
        department_id,
        department_name,
        site,
        specialty_group,
        current_timestamp() as ingested_at
    from {{ ref('departments') }}
),

final as (
    select * from departments
)

select * from final
