{#- A filter: keep only rows whose subject has no tombstone. -#}
{% macro not_tombstoned(id_expr, keys=none) -%}
    {{ return(adapter.dispatch('not_tombstoned', 'gdpr_lakehouse')(id_expr, keys)) }}
{%- endmacro %}

{% macro spark__not_tombstoned(id_expr, keys=none) -%}
    not exists (
        select 1 from {{ ref('privacy_erasure_tombstones') }} as tombstones
        where tombstones.subject_hash = {{ gdpr_lakehouse.tombstone_hash(id_expr, keys) }}
    )
{%- endmacro %}
