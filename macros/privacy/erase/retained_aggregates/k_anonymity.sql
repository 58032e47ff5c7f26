{#
    The k of the retained anonymous aggregates (var k_anonymity, default 5): a cell is
    published only while at least k distinct data subjects are counted in it
    (gold_encounters_monthly; the compliance test retained_aggregates_k_anonymous
    checks every version a table's history holds). A whole number from 2 to 1000:
    k = 1 would publish single people, and is refused like any other bad value.
#}
{% macro k_anonymity() -%}
    {{ return(adapter.dispatch('k_anonymity', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__k_anonymity() -%}
    {%- set k = var('k_anonymity', 5) -%}
    {%- if k is not number or k is sameas true or k is sameas false or k != k | int or k < 2 or k > 1000 -%}
        {%- do exceptions.raise_compiler_error("var k_anonymity is " ~ (k | string)[:40]
            ~ "; it must be a whole number of data subjects from 2 to 1000 (default 5): "
            ~ "a retained aggregate publishes a cell only when at least that many are counted in it") -%}
    {%- endif -%}
    {{ return(k | int) }}
{%- endmacro %}
