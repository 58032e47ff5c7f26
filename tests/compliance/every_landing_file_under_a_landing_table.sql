{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(tags=['compliance'], meta={'fix': 'move each file into the folder of the landing table it belongs to (the next build reads it), or delete it'}) }}
{#- No landing file is left unread without a word: every file under the landing zone
    is in the folder of a landing table (at any depth), where bronze_landing_batch lists
    it and the ledger records it ingested or rejected. A file beside those folders (at
    the zone's root, in a folder named for no source: `patient/` for `patients/`) is
    read by nothing; here it is named. -#}
{%- set entities = gdpr_lakehouse.cdc_landing_entities() | map(attribute='name') | list -%}
{%- set under = [] -%}
{%- for entity, location in gdpr_lakehouse.landing_locations(entities).items() -%}
    {%- do under.append("startswith(path, '" ~ location ~ "/')") -%}
{%- endfor %}

select
    path as file_path,
    'under no landing table: nothing reads it (the landing tables read ' || '{{ entities | join(", ") }}' || ')' as problem
from {{ gdpr_lakehouse.landing_files_relation() }}
where not ({{ under | join(' or ') if under else 'false' }})
