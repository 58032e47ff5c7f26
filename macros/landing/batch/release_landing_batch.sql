{#- Drop this invocation's staged reads of `relation` (every one when none): the
    bronze post-hook, once the ledger holds what it read, and on-run-end for a batch
    whose bronze model did not run. -#}
{% macro release_landing_batch(relation=none) -%}
    {{ return(adapter.dispatch('release_landing_batch', 'gdpr_lakehouse')(relation)) }}
{%- endmacro %}

{% macro spark__release_landing_batch(relation=none) -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set staged = gdpr_lakehouse._invocation_cache().setdefault('landing_batch_views', {}) -%}
    {%- set suffix = '_' ~ (relation.identifier if relation is not none else '') ~ '_' ~ (invocation_id | string | replace('-', '_')) -%}
    {%- set mine = ['global_temp.gdpr_landing' ~ suffix, 'global_temp.gdpr_batch' ~ suffix] -%}
    {#- a whole view (gdpr_landing_*) reads its batch view (gdpr_batch_*): dropped first -#}
    {%- for view in staged.keys() | sort(reverse=true) if relation is none or view in mine -%}
        {%- do run_query('uncache table if exists ' ~ view) -%}
        {%- do run_query('drop view if exists ' ~ view) -%}
        {%- do staged.pop(view, none) -%}
    {%- endfor -%}
    {{ return('') }}
{%- endmacro %}
