{#
    The body of a retained anonymous aggregate that is k-anonymous and blind to
    erasure (an incremental model, incremental_strategy insert_overwrite,
    full_refresh false; gold_encounters_monthly and gold_clicks_hourly):

        {{ gdpr_lakehouse.k_anonymous_aggregate(
            upstream=ref('silver_clicks'), subject='user_pseudonym',
            cells=[['clicked_hour', 'rows.clicked_hour'], ['device', "coalesce(rows.device, 'unknown')"]],
            measures=[['click_count', 'count(*)', 'bigint']]) }}

    upstream is read as `rows` (joins: more of the FROM clause, e.g. a seed to map a
    code to its chapter); subject is its column naming the data subject, by the
    vault's pseudonym (subject_kind pseudonym, the default: matched to the tombstones'
    pseudonym_hash) or by the source id (id: their subject_hash).
    The table gets the cells, the measures, subject_count (distinct subjects) and
    source_version (the upstream version counted).

    - A cell is published once at least var k_anonymity subjects are counted in it; a
      cell a change at the source takes below k is withdrawn. No version of the table
      holds a cell of fewer than k (compliance test retained_aggregates_k_anonymous,
      meta.privacy.k_anonymity: subject_count).
    - An erasure changes nothing: each run adds to every published cell what the
      upstream gained or lost since the version last counted: the upstream now minus
      the upstream then, both counted only over subjects not tombstoned (one version
      of the tombstones, read after the upstream's: gdpr_erase tombstones a subject
      before it deletes a row). An erased subject is in neither count, so what they
      contributed stays counted and the table is written with the same cells and counts; it keeps no erased
      split that would show which cell an erased person was in.
    - When the version last counted can no longer be read (a VACUUM after a purge
      deleted its files), or has other columns than the upstream's now (an upgrade
      rebuilt it: its cells cannot be recounted), a published cell takes the greater
      of each measure it holds and the upstream's now (logged): it never drops
      because of an erasure.
    - A table an older version built (no subject_count) starts over from the
      upstream's live cells.
#}
{% macro k_anonymous_aggregate(upstream, subject, cells, measures, joins='', subject_kind='pseudonym') -%}
    {{ return(adapter.dispatch('k_anonymous_aggregate', 'gdpr_lakehouse')(upstream, subject, cells, measures, joins, subject_kind)) }}
{%- endmacro %}

{% macro spark__k_anonymous_aggregate(upstream, subject, cells, measures, joins='', subject_kind='pseudonym') -%}
    {%- if subject_kind not in ('pseudonym', 'id') -%}
        {%- do exceptions.raise_compiler_error("k_anonymous_aggregate: subject_kind is " ~ (subject_kind | string)[:40]
            ~ "; it must be pseudonym (the subject column holds the vault's subject_pseudonym) or id (its subject_id)") -%}
    {%- endif -%}
    {%- set hash_column = 'pseudonym_hash' if subject_kind == 'pseudonym' else 'subject_hash' -%}
    {%- set k = gdpr_lakehouse.k_anonymity() -%}
    {#- the upstream's version first, the tombstones' after: gdpr_erase tombstones a
        subject before it deletes a row, so every erasure the upstream version shows
        is in the tombstones read next -#}
    {%- set latest = [gdpr_lakehouse.latest_delta_version(upstream) | int, 0] | max -%}
    {%- set tombstones = ref('privacy_erasure_tombstones') -%}
    {%- set tombstones_version = [gdpr_lakehouse.latest_delta_version(tombstones) | int, 0] | max -%}
    {%- set kept = none -%}
    {%- if is_incremental() and execute and 'subject_count' in (adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list) -%}
        {%- set kept = this -%}
    {%- endif -%}
    {%- set consumed = gdpr_lakehouse.consumed_version(kept) | int -%}
    {%- set readable = kept is not none and consumed >= 0 and consumed <= latest
        and gdpr_lakehouse.cdf_readable_from(upstream) | int <= consumed -%}
    {#- an upgrade that rebuilt the upstream with other columns (silver.encounters'
        department stored encrypted) left a version the cells cannot be recounted on -#}
    {%- set same_columns = namespace(value=true) -%}
    {%- if readable and execute and consumed != latest -%}
        {%- set then = run_query('select * from ' ~ upstream ~ ' version as of ' ~ consumed ~ ' limit 0').column_names | map('lower') | sort | list -%}
        {%- set now = run_query('select * from ' ~ upstream ~ ' version as of ' ~ latest ~ ' limit 0').column_names | map('lower') | sort | list -%}
        {%- set same_columns.value = then == now -%}
    {%- endif -%}
    {%- set counted = readable and same_columns.value -%}
    {%- if kept is not none and not counted and execute -%}
        {%- do log(this ~ ": version " ~ consumed ~ " of " ~ upstream ~ ", last counted, "
            ~ ("can no longer be read (a VACUUM deleted its files)" if not readable else "has other columns than its version " ~ latest ~ " (an upgrade rebuilt it)")
            ~ "; each published cell keeps the greater of its counts and the upstream's now", info=true) -%}
    {%- endif -%}
    {%- set names = cells | map(attribute=0) | list -%}
    {%- set sums = (measures | map(attribute=0) | list) + ['subject_count'] -%}
    {%- set same_cell -%}
        {%- for name in names %}{% if not loop.first %} and {% endif %}{{ '{side}.' ~ name ~ ' <=> kept.' ~ name }}{% endfor -%}
    {%- endset %}
with erased as (
    -- one version of the tombstones for both counts
    select {{ hash_column }} as subject_hash
    from {{ tombstones }} version as of {{ tombstones_version }}  -- noqa: AL01,AL05,RF04
    where {{ hash_column }} is not null
),
{% for side, version in [('now', latest)] + ([('before', consumed)] if counted else []) %}
{#- an erased subject is in neither count -#}
{{ side }}_cells as (
    {#- each row's subject hashed in a projection (macro tombstone_hash) -#}
    {{ gdpr_lakehouse.k_anonymous_cells('(select *, ' ~ gdpr_lakehouse.tombstone_hash(subject) ~ ' as erased_subject_hash from '
            ~ upstream ~ ' version as of ' ~ version ~ ')', subject, cells, measures, joins,
        'left anti join erased on erased.subject_hash = rows.erased_subject_hash') }}
),
{% endfor %}
{%- if kept is not none %}
published as (
    select
        {%- for name in names %}
        kept.{{ name }},
        {%- endfor %}
        {%- for name in sums %}
        {%- if counted %}
        kept.{{ name }} + coalesce(now.{{ name }}, 0) - coalesce(before.{{ name }}, 0) as {{ name }}
        {%- else %}
        greatest(kept.{{ name }}, coalesce(now.{{ name }}, 0)) as {{ name }}
        {%- endif %}
        {%- if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ kept }} as kept
    left join now_cells as now on {{ same_cell | replace('{side}', 'now') }}
    {%- if counted %}
    left join before_cells as before on {{ same_cell | replace('{side}', 'before') }}
    {%- endif %}
),
{% endif %}
fresh as (
    select now.*
    from now_cells as now
    {%- if kept is not none %}
    left anti join {{ kept }} as kept on {{ same_cell | replace('{side}', 'now') }}
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
        {%- for name in names %}
        {{ name }},
        {%- endfor %}
        {%- for name, expression, type in measures %}
        cast({{ name }} as {{ type }}) as {{ name }},
        {%- endfor %}
        cast(subject_count as bigint) as subject_count,
        cast({{ latest }} as bigint) as source_version{{ gdpr_lakehouse.retired_columns(names + (measures | map(attribute=0) | list) + ['subject_count', 'source_version']) }}  -- noqa: LT02
    from candidates
    where subject_count >= {{ k }}
)

select * from final
{%- endmacro %}
