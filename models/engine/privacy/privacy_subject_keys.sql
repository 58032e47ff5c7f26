{#- an insert-only MERGE on subject_id, not an append: an append is blind to a
    concurrent build's, so two builds could key one subject twice; a MERGE reads the
    vault it writes, and Delta fails the second of two racing builds -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='subject_id',
        merge_insert_only=true,
        full_refresh=false,
        post_hook=["{{ gdpr_lakehouse.record_key_envelope(this) }}"],
    )
}}

{#-
    The subject key vault: one random 256-bit data key per data subject, created the
    first time the subject arrives: in the demo's landing zone (an incremental run reads
    only this build's landing files, bronze.landing_batch, before bronze reads them) or
    in a feed an adopter names in var gdpr_lakehouse_subjects (macros/utils/adoption/). Subjects only: the lakehouse's
    own keys live in privacy.system_keys. Append-only and never rebuilt
    (full_refresh=false): a rebuilt vault would orphan every ciphertext. Erasure deletes
    a subject's row and purges the vault's files at once. A tombstoned subject never
    gets a key again, on the first build too (a vault made again while tombstones exist).
    The key mode (var key_envelope) is recorded on the table when it is made
    (post-hook record_key_envelope) and read from there by every command.
-#}
{%- if gdpr_lakehouse.demo_enabled() %}
-- depends_on: {{ ref('bronze_landing_batch') }}
-- depends_on: {{ ref('bronze_landing_ledger') }}
{%- endif %}
with arrivals as (
    {%- for feed in gdpr_lakehouse.subject_feeds() %}
    {%- if not loop.first %}
    union
    {%- endif %}
    select distinct
        cast(landed.`{{ feed.subject_id }}` as string) as subject_id,
        '{{ feed.subject_type }}' as subject_type
    from {{ gdpr_lakehouse.landing_rows(feed.relation, is_incremental()) if feed.batch_only else feed.relation }} as landed
    where landed.`{{ feed.subject_id }}` is not null
    {%- endfor %}
),

new_subjects as (
    select
        arrivals.subject_id,
        arrivals.subject_type
    from arrivals
    {% if is_incremental() %}
    left anti join {{ this }} as vault
        on arrivals.subject_id = vault.subject_id
    {% endif %}
    where {{ gdpr_lakehouse.not_tombstoned('arrivals.subject_id') }}
),

keyed as (
    select
        subject_id,
        subject_type,
        {{ gdpr_lakehouse.new_data_key('subject_id') }} as data_key
    from new_subjects
),

named as (
    select
        subject_id,
        subject_type,
        {{ gdpr_lakehouse.pseudonym('data_key', 'subject_id') }} as subject_pseudonym,
        data_key
    from keyed
),

final as (
    {#- each key wrapped for its own subject (macro key_binding): copied to another
        subject's row, it does not open -#}
    select
        subject_id,
        subject_type,
        subject_pseudonym,
        {{ gdpr_lakehouse.wrap_key('data_key', gdpr_lakehouse.key_binding('subject_pseudonym')) }} as data_key,
        current_timestamp() as created_at
    from named
)

select * from final
