{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='ephemeral') }}

{#- Users bronze knows, by pseudonym: what clicks and orders are checked against. -#}
select known.user_pseudonym as subject_pseudonym
from {{ ref('bronze_users') }} as known
