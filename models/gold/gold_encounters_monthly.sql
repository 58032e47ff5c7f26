{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        full_refresh=false,
        on_schema_change='append_new_columns',
    )
}}

{#-
    Anonymous aggregate that keeps counting an erased patient's encounters (the
    right-to-be-forgotten guide's "anonymous aggregates"), per admission month, ICD-10
    chapter and department, published k-anonymously (var k_anonymity):

    - a cell is published once at least k distinct patients are counted in it, from
      then on it keeps counting patients erased later; a cell that falls below k by a
      change at the source is withdrawn. No version of the table holds a cell of fewer
      than k patients (compliance test retained_aggregates_k_anonymous).
    - an erasure changes nothing here. Each run adds to every published cell what
      silver_encounters gained or lost since the version the table last counted
      (source_version): silver now minus silver then, both counted only over patients
      whose key is still in the vault. An erased patient is in neither, so their
      encounters stay counted as they were, and the table's versions never show
      which cell an erased person was in (it keeps no erased split either).
    - when the version last counted can no longer be read (a VACUUM after a purge
      deleted its files), a published cell takes the greater of what it holds and
      what silver holds now (logged): it never drops because of an erasure.
    Never rebuilt by --full-refresh (full_refresh=false); a table an older version
    built (no subject_count) starts over from silver's live cells.
-#}
{%- set k = gdpr_lakehouse.k_anonymity() -%}
{%- set upstream = ref('silver_encounters') -%}
{%- set latest = [gdpr_lakehouse.latest_delta_version(upstream) | int, 0] | max -%}
{%- set kept = none -%}
{%- if is_incremental() and execute and 'subject_count' in (adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list) -%}
    {%- set kept = this -%}
{%- endif -%}
{%- set consumed = gdpr_lakehouse.consumed_version(kept) | int -%}
{%- set counted = kept is not none and consumed >= 0 and consumed <= latest
    and gdpr_lakehouse.cdf_readable_from(upstream) | int <= consumed -%}
{%- if kept is not none and not counted and execute -%}
    {%- do log(this ~ ": version " ~ consumed ~ " of " ~ upstream ~ ", last counted, can no longer be read (a VACUUM deleted its files); "
        ~ "each published cell keeps the greater of its counts and silver's now", info=true) -%}
{%- endif -%}
{%- set cell = ['admitted_month', 'icd10_chapter', 'department_id'] %}

{%- set vault = ref('privacy_subject_keys') %}
with keys as (
    -- one version of the vault for both counts
    select subject_pseudonym
    from {{ vault }} version as of {{ [gdpr_lakehouse.latest_delta_version(vault) | int, 0] | max }}  -- noqa: AL01,AL05,RF04
),

chapters as (
    select * from {{ ref('icd10_chapters') }}
),

{% for name, version in [('now', latest)] + ([('before', consumed)] if counted else []) %}
{{ name }}_cells as (
    select
        date_trunc('month', encounters.admitted_at) as admitted_month,
        coalesce(chapters.chapter, 'unknown') as icd10_chapter,
        encounters.department_id,
        count(*) as encounter_count,
        sum(encounters.cost_amount) as total_cost,
        count(distinct encounters.patient_pseudonym) as subject_count
    from (select * from {{ upstream }} version as of {{ version }}) as encounters  -- noqa: AL01,AL05,RF04
    left join chapters
        on encounters.diagnosis_category between chapters.first_category and chapters.last_category
    -- patients whose key is still in the vault: an erased one is in neither count
    where encounters.patient_pseudonym in (select keys.subject_pseudonym from keys)
    group by 1, 2, 3
),

{% endfor %}
{% if kept is not none %}
published as (
    select
        {%- for column in cell %}
        kept.{{ column }},
        {%- endfor %}
        {%- for measure in ['encounter_count', 'total_cost', 'subject_count'] %}
        {%- if counted %}
        kept.{{ measure }} + coalesce(now.{{ measure }}, 0) - coalesce(before.{{ measure }}, 0) as {{ measure }}
        {%- else %}
        greatest(kept.{{ measure }}, coalesce(now.{{ measure }}, 0)) as {{ measure }}
        {%- endif %}
        {%- if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ kept }} as kept
    left join now_cells as now
        on {% for column in cell %}{% if not loop.first %} and {% endif %}now.{{ column }} <=> kept.{{ column }}{% endfor %}
    {%- if counted %}
    left join before_cells as before
        on {% for column in cell %}{% if not loop.first %} and {% endif %}before.{{ column }} <=> kept.{{ column }}{% endfor %}
    {%- endif %}
),

{% endif %}
fresh as (
    select now.*
    from now_cells as now
    {%- if kept is not none %}
    left anti join {{ kept }} as kept
        on {% for column in cell %}{% if not loop.first %} and {% endif %}now.{{ column }} <=> kept.{{ column }}{% endfor %}
    {%- endif %}
),

candidates as (
    select * from fresh
    {%- if kept is not none %}
    union all
    select * from published
    {%- endif %}
),

final as (
    select
        admitted_month,
        icd10_chapter,
        department_id,
        cast(encounter_count as bigint) as encounter_count,
        cast(total_cost as decimal(22, 2)) as total_cost,
        cast(subject_count as bigint) as subject_count,
        cast({{ latest }} as bigint) as source_version{{ gdpr_lakehouse.retired_columns(['admitted_month', 'icd10_chapter', 'department_id', 'encounter_count', 'total_cost', 'subject_count', 'source_version']) }}  -- noqa: LT02
    from candidates
    where subject_count >= {{ k }}
)

select * from final
