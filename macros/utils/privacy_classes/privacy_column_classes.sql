{#
    The privacy contract's column classes: meta.privacy.classes maps each class to the
    node's columns in it, and every column a node builds or documents is in exactly one
    (tests/compliance/privacy_contract_coverage.sql):
    - direct_identifier: names or singles out a person by itself, in clear or encrypted:
      a raw subject id, a pseudonym, a source record id the source links to its owner
      (encounter, order, click id), a name, an e-mail, a key or keyed hash of one;
    - quasi_identifier: singles someone out in combination (a birth year, a city, an
      event time, a device);
    - special_category: GDPR Art. 9 data (health: a diagnosis, the cost of a care);
    - non_personal: none of these by itself (a count, an amount, a status, a technical
      column). A row's link to its subject comes from the subject key, which erasure
      follows whatever the class of its other columns.
    Direct identifiers and special-category values never enter Delta statistics
    (macros/delta/spark__tblproperties_clause.sql).
#}
{% macro privacy_column_classes(privacy) -%}
    {{ return(adapter.dispatch('privacy_column_classes', 'gdpr_lakehouse')(privacy)) }}
{%- endmacro %}

{#- {column (lower case): its class} of a node's meta.privacy; a column declared twice
    keeps the first of its classes in the order above (privacy_contract_problems
    names the other). -#}
{% macro spark__privacy_column_classes(privacy) -%}
    {%- set classes = (privacy or {}).get('classes') -%}
    {%- set found = {} -%}
    {%- if classes is mapping -%}
        {%- for kind in gdpr_lakehouse._privacy_class_names() if classes.get(kind) is iterable and classes.get(kind) is not string -%}
            {%- for column in classes.get(kind) if column is string and column | lower not in found -%}
                {%- do found.update({column | lower: kind}) -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(found) }}
{%- endmacro %}

{#- The four classes, in the order the contract lists them. -#}
{% macro _privacy_class_names() -%}
    {{ return(['direct_identifier', 'quasi_identifier', 'special_category', 'non_personal']) }}
{%- endmacro %}
