{#- Restriction of processing (GDPR Art. 18): the subject ids whose data is kept but not
    published, as a query: an active restriction (restrict_processing) or an active
    legal hold (a record the law requires keeping is kept, not processed further). -#}
{% macro restricted_subjects() -%}
    {{ return(adapter.dispatch('restricted_subjects', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__restricted_subjects() -%}
    select restrictions.subject_id from {{ ref('privacy_restrictions') }} as restrictions
    where restrictions.lifted_at is null and restrictions.subject_id is not null
    union all
    select holds.subject_id from {{ ref('privacy_legal_holds') }} as holds
    where holds.released_at is null and holds.subject_id is not null
{%- endmacro %}

{#- Takes restricted subjects out of what is published at once: deletes their rows from
    every per-subject table the consumers read (a model with meta audience: consumers
    and a subject key; views filter themselves). The next build keeps them out
    (not_restricted); once lifted, the next build brings them back. Called by
    restrict_processing and legal_hold inside their tagged commits. -#}
{#- ids as VALUES rows: ('a'), ('b') -#}
{% macro _sql_rows(ids) -%}
    {%- set rows = [] -%}
    {%- for subject_id in ids -%}{%- do rows.append('(' ~ gdpr_lakehouse._sql_string(subject_id) ~ ')') -%}{%- endfor -%}
    {{ return(rows | join(', ')) }}
{%- endmacro %}

{% macro _unpublish(ids) -%}
    {%- set vault = gdpr_lakehouse._control_relation('privacy_subject_keys') -%}
    {%- set id_list -%}{% for subject_id in ids %}{{ gdpr_lakehouse._sql_string(subject_id) }}{{ ', ' if not loop.last }}{% endfor %}{%- endset -%}
    {#- a MERGE: Delta's DELETE takes no subquery, and pseudonyms stay out of the SQL text -#}
    {%- for published in gdpr_lakehouse.published_subject_models() if published.table -%}
        {%- set keys = ("select subject_pseudonym as restricted_key from " ~ vault ~ " where subject_id in (" ~ id_list ~ ")")
            if published.kind == 'pseudonym'
            else "select * from values " ~ gdpr_lakehouse._sql_rows(ids) ~ " as restricted (restricted_key)" -%}
        {%- do run_query("merge into " ~ published.relation ~ " as published using (" ~ keys ~ ") as restricted"
            ~ " on published." ~ adapter.quote(published.key) ~ " = restricted.restricted_key when matched then delete") -%}
    {%- endfor -%}
{%- endmacro %}
