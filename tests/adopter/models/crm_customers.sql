with exported as (
    select * from {{ source('crm_landing', 'customers') }}
),

landed as (
    select exported.*
    from exported
    {% if is_incremental() %}
    where exported.updated_at > (select coalesce(max(built.updated_at), timestamp '1970-01-01') from {{ this }} as built)
    {% endif %}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

final as (
    select
        landed.customer_id,
        {{ gdpr_lakehouse.encrypt_pii('landed.full_name', 'vault.data_key') }} as full_name_enc,
        {{ gdpr_lakehouse.encrypt_pii('landed.email', 'vault.data_key') }} as email_enc,
        landed.country,
        landed.updated_at
    from landed
    inner join vault on landed.customer_id = vault.subject_id
    where {{ gdpr_lakehouse.not_tombstoned('landed.customer_id') }}
)

select * from final
