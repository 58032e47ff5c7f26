{#- Every export file, every build: the newest row per customer wins, whichever file it
    came in and whenever it arrived, so a late or replayed export is never skipped by a
    high-water mark. -#}
with exported as (
    select
        files.*,
        row_number() over (
            partition by files.customer_id order by files.updated_at desc, files._metadata.file_path desc
        ) as recency
    from {{ source('crm_landing', 'customers') }} as files
),

latest as (
    select * from exported
    where recency = 1
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

final as (
    select
        latest.customer_id,
        {{ gdpr_lakehouse.encrypt_pii('latest.full_name', 'vault.data_key', 'vault.subject_pseudonym', 'full_name_enc') }} as full_name_enc,
        {{ gdpr_lakehouse.encrypt_pii('latest.email', 'vault.data_key', 'vault.subject_pseudonym', 'email_enc') }} as email_enc,
        latest.country,
        latest.updated_at
    from latest
    inner join vault on latest.customer_id = vault.subject_id
    where {{ gdpr_lakehouse.not_tombstoned('latest.customer_id') }}
)

select * from final
