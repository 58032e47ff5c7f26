{#- What must hold before gdpr_erase writes anything: the key envelope as recorded, every subject type keyed by a feed, no clone of a planned relation outside the plan. -#}
{% macro _erase_preconditions() -%}
    {%- do gdpr_lakehouse.assert_key_envelope() -%}
    {#- a relation whose subject_type no subject feed keys would never be erased: refused
        before any write (a savepoint's copy has its relation's type) -#}
    {%- do gdpr_lakehouse.assert_known_subject_types(gdpr_lakehouse.erasure_plan(savepoints=false), 'gdpr_erase') -%}
    {#- a clone of a planned relation made outside the plan keeps the subject readable -#}
    {%- do gdpr_lakehouse._refuse_clones(gdpr_lakehouse.erasure_plan(), 'gdpr_erase') -%}
{%- endmacro %}
