select
    customer_pseudonym,
    count(*) as tickets,
    max(opened_at) as last_opened_at
from {{ ref('crm_tickets') }}
group by customer_pseudonym
