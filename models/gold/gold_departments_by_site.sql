with departments as (
    select
        department_id,
        site_name,
        specialty_group
    from {{ ref('silver_departments') }}
),

final as (
    select
        site_name,
        count(*) as department_count,
        count(distinct specialty_group) as specialty_group_count
    from departments
    group by site_name
)

select * from final
