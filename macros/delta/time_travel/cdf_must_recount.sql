{#- An incremental consumer of a Change Data Feed that has consumed up to version
    `consumed` must recount when the feed no longer reaches back to consumed + 1. -#}
{% macro cdf_must_recount(upstream, consumed, latest) -%}
    {{ return(adapter.dispatch('cdf_must_recount', 'gdpr_lakehouse')(upstream, consumed, latest)) }}
{%- endmacro %}

{% macro spark__cdf_must_recount(upstream, consumed, latest) -%}
    {%- set readable_from = gdpr_lakehouse.cdf_readable_from(upstream) | int -%}
    {%- set recount = execute and latest > consumed and consumed + 1 < readable_from -%}
    {%- if recount -%}
        {%- do log(this ~ ": the change feed of " ~ upstream ~ " starts at version " ~ readable_from ~ ", version "
            ~ (consumed + 1) ~ " is the next to consume; recounting at version " ~ latest, info=true) -%}
    {%- endif -%}
    {{ return(recount) }}
{%- endmacro %}
