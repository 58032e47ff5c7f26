{#- What a request id of a kind looks like (a regular expression): the jobs check every
    id they are given with it before it reaches SQL or a path, and the heal of an
    interrupted restore the restore ids it reads back. -#}
{% macro request_id_pattern(kind) -%}
    {{ return(adapter.dispatch('request_id_pattern', 'gdpr_lakehouse')(kind)) }}
{%- endmacro %}

{% macro spark__request_id_pattern(kind) -%}
    {{ return('^' ~ gdpr_lakehouse._request_id_prefix(kind) ~ '-[0-9]{8}T[0-9]{6}-[0-9a-f]{10}$') }}
{%- endmacro %}
