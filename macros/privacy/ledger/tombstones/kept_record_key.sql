{#- The key a record kept anonymized (on_erasure: anonymize) is stored under: its source
    id while its subject is known and not erased, its anonymized_record_id otherwise (an
    erased subject, or none: the landing purge keeps such events without the subject).
    Bronze, its delete markers, its rejected events and the check that recomputes bronze
    all key such records by it, so they agree with what gdpr_erase writes. -#}
{% macro kept_record_key(key_expr, subject_expr, keys=none) -%}
    {{ return(adapter.dispatch('kept_record_key', 'gdpr_lakehouse')(key_expr, subject_expr, keys)) }}
{%- endmacro %}

{% macro spark__kept_record_key(key_expr, subject_expr, keys=none) -%}
    case when {{ subject_expr }} is not null and {{ gdpr_lakehouse.not_tombstoned(subject_expr, keys) }}
        then cast({{ key_expr }} as string)
        else {{ gdpr_lakehouse.anonymized_record_id(key_expr, keys) }} end
{%- endmacro %}
