{#- Steps 4-6 of gdpr_erase: one batched write per relation of the plan, in DAG order (the vault last, then its purge), every commit tagged; then the sweep; the outcomes. -#}
{% macro _erase_relations(plan, ctx) -%}
    {#- 4. one batched write per relation, DAG order; 5. the vault last, then its purge.
        Every commit carries the tag: purpose erase, batch id, request ids. -#}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='erase', request_ids=ctx.request_ids, batch_id=ctx.batch)) -%}
    {%- set outcomes = [] -%}
    {%- for step in plan -%}
        {%- do outcomes.append(gdpr_lakehouse._erase_relation(step, ctx)) -%}
        {%- do gdpr_lakehouse._crash_point(step.relation_name) -%}
    {%- endfor -%}
    {#- 6. a write that read the tombstones before step 3 and committed after its
        relation was erased (ingestion, a rebuild) brings rows back: sweep -#}
    {%- set outcomes = gdpr_lakehouse._sweep(outcomes, ctx) -%}
    {%- if ctx.prune_prefixes is not none -%}
        {%- do gdpr_lakehouse._pruning_session(false) -%}
    {%- endif -%}
    {{ return(outcomes) }}
{%- endmacro %}
