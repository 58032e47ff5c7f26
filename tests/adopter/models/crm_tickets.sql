with tickets as (
    select * from {{ source('crm_landing', 'tickets') }}
),

vault as (
    select * from {{ ref('privacy_data_keys') }}
),

final as (
    select
        tickets.ticket_id,
        vault.subject_pseudonym as customer_pseudonym,
        tickets.channel,
        {{ gdpr_lakehouse.encrypt_pii('tickets.body', 'vault.data_key', 'vault.subject_pseudonym', 'body_enc') }} as body_enc,
        tickets.opened_at
    from tickets
    inner join vault on tickets.customer_id = vault.subject_id
    where {{ gdpr_lakehouse.not_tombstoned('tickets.customer_id') }}
)

select * from final
