{#- Stop `operation` when a step of `plan` declares a subject_type the vault keys no
    subject of: no erasure request is ever of that type, so the relation would be
    exempt from erasure without a word (a plural, a rename). -#}
{% macro assert_known_subject_types(plan, operation) -%}
    {{ return(adapter.dispatch('assert_known_subject_types', 'gdpr_lakehouse')(plan, operation)) }}
{%- endmacro %}

{% macro spark__assert_known_subject_types(plan, operation) -%}
    {%- set known = gdpr_lakehouse.subject_types() -%}
    {%- for step in plan if step.subject_type and step.subject_type not in known -%}
        {%- do exceptions.raise_compiler_error(operation ~ ": " ~ step.relation_name ~ " declares subject_type "
            ~ step.subject_type ~ ", which no subject feed keys (the vault keys: " ~ known | join(', ')
            ~ "): its rows would never be erased. Fix its meta.privacy.subject_type; nothing was changed") -%}
    {%- endfor -%}
    {{ return('') }}
{%- endmacro %}
