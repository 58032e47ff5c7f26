{#- gdpr_erase's arguments checked before anything runs: the subject ids (none: every open request), and reason and requested_by only with them. -#}
{% macro _erase_arguments(subject_ids, reason, requested_by) -%}
    {%- set ids = gdpr_lakehouse._validate_subject_ids(subject_ids) if subject_ids is not none else none -%}
    {%- if ids is none and (reason is not none or requested_by is not none) -%}
        {%- do exceptions.raise_compiler_error("gdpr_erase: reason and requested_by describe new requests; give them with subject_ids "
            ~ "(or record requests first with request_erasure)") -%}
    {%- endif -%}
    {%- do gdpr_lakehouse._validate_text(reason, 'reason') -%}
    {%- do gdpr_lakehouse._validate_text(requested_by, 'requested_by', max_length=128) -%}
    {{ return(ids) }}
{%- endmacro %}
