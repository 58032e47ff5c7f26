{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
with checked as (
    select * from {{ ref('silver_patients_checked') }}
    where quality_issue is null
),

final as (
    select
        patient_pseudonym,
        full_name_enc,
        email_enc,
        phone_enc,
        national_id_enc,
        address_enc,
        {{ gdpr_lakehouse.encrypt_pii('year(birth_date)', 'data_key', 'patient_pseudonym', 'birth_year_enc') }} as birth_year_enc,
        case
            when months_between(current_date(), birth_date) / 12 < 18 then '0-17'
            when months_between(current_date(), birth_date) / 12 < 40 then '18-39'
            when months_between(current_date(), birth_date) / 12 < 65 then '40-64'
            else '65+'
        end as age_band,
        city_enc,
        insurer_enc,
        ingested_at
    from checked
)

select * from final
