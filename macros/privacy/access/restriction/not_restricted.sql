{#- A predicate for a published model's rows: true unless the row's subject (its
    pseudonym, or its source id with kind='id') is restricted. Per-subject gold models
    and the consumers' masked views filter with it; a restriction reaches a view at
    once and a gold table at its next build. -#}
{% macro not_restricted(key_expr, kind='pseudonym') -%}
    {{ return(adapter.dispatch('not_restricted', 'gdpr_lakehouse')(key_expr, kind)) }}
{%- endmacro %}

{% macro spark__not_restricted(key_expr, kind) -%}
    {%- if kind not in ('pseudonym', 'id') -%}
        {%- do exceptions.raise_compiler_error("not_restricted: kind is " ~ kind ~ "; allowed: pseudonym, id") -%}
    {%- endif -%}
    not exists (
        select 1 from ({{ gdpr_lakehouse.restricted_subjects() }}) as restricted
        {%- if kind == 'pseudonym' %}
        inner join {{ ref('privacy_subject_keys') }} as restricted_vault
            on restricted_vault.subject_id = restricted.subject_id
        where restricted_vault.subject_pseudonym = {{ key_expr }}
        {%- else %}
        where restricted.subject_id = {{ key_expr }}
        {%- endif %}
    )
{%- endmacro %}
