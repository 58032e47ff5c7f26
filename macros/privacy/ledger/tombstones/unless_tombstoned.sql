{#- The subject id, or null when the subject is tombstoned: for relations that keep an
    erased subject's rows anonymized (on_erasure: anonymize). -#}
{% macro unless_tombstoned(id_expr, keys=none) -%}
    {{ return(adapter.dispatch('unless_tombstoned', 'gdpr_lakehouse')(id_expr, keys)) }}
{%- endmacro %}

{% macro spark__unless_tombstoned(id_expr, keys=none) -%}
    case when {{ gdpr_lakehouse.not_tombstoned(id_expr, keys) }} then {{ id_expr }} end
{%- endmacro %}
