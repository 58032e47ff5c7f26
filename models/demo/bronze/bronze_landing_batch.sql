{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{ config(materialized='table', cdc_delete_condition='', cdc_sequence_by=[]) }}

{#-
    This build's landing files: every file anywhere under the folder of a CDC landing
    table, minus the ones the ledger records as ingested (same path, size and
    modification time: a file replaced in place, even by one of the same size, is read
    again).
    Rebuilt at every run and stamped with the invocation that listed it: the bronze
    models read only these files, and their post-hooks record them in the ledger only
    when this invocation listed them (macros/landing/batch/). A path with
    characters that cannot be written into SQL is kept with file_issue set: never read,
    recorded as rejected. No personal data.
-#}
{%- set entities = gdpr_lakehouse.cdc_landing_entities() | map(attribute='name') | list %}
{#- a file's entity is the landing table whose folder holds it, at any depth (a
    date-partitioned sink writes patients/2026/12/04/part-0.parquet) -#}
{%- set whens = [] -%}
{%- for entity, location in gdpr_lakehouse.landing_locations(entities).items() -%}
    {%- do whens.append("when startswith(path, '" ~ location ~ "/') then '" ~ entity ~ "'") -%}
{%- endfor -%}
{%- set entity_of = ('case ' ~ whens | join(' ') ~ ' end') if whens else 'cast(null as string)' %}

with listed as (
    select
        {{ entity_of }} as entity,
        path as file_path,
        length as file_size,
        modificationtime as file_modified_at
    from {{ gdpr_lakehouse.landing_files_relation() }}
),

ingested as (
    select
        file_path,
        file_size,
        file_modified_at
    from {{ ref('bronze_landing_ledger') }}
    where status = 'ingested'
),

final as (
    select
        listed.entity,
        listed.file_path,
        listed.file_size,
        listed.file_modified_at,
        case
            when not listed.file_path rlike '{{ gdpr_lakehouse.landing_path_pattern() }}'
                then 'file name not allowed: a landing path may only contain letters, digits and _ . / : = @ + -'
        end as file_issue,
        current_timestamp() as listed_at,
        '{{ gdpr_lakehouse.current_invocation() }}' as invocation_id
    from listed
    left anti join ingested
        on
            listed.file_path = ingested.file_path
            and listed.file_size = ingested.file_size
            and listed.file_modified_at = ingested.file_modified_at
    where listed.entity in ('{{ entities | join("', '") }}')
)

select * from final
