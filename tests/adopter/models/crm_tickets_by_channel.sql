select
    channel,
    cast(opened_at as date) as opened_on,
    count(*) as tickets
from {{ ref('crm_tickets') }}
group by channel, cast(opened_at as date)
