with departments as (
    select
        department_id,
        department_name,
        site,
        specialty_group
    from {{ ref('bronze_departments') }}
),

cleaned as (
    select
        upper(trim(department_id)) as department_id,
        trim(department_name) as department_name,
        trim(site) as site_name,
        lower(trim(specialty_group)) as specialty_group
    from departments
    where department_id is not null
),

final as (
    select * from cleaned
)

select * from final
