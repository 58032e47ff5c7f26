{#- Step 3 of gdpr_erase: the batch's tombstones first (nothing re-ingests these subjects from here on), then the plan read (savepoint copies included), the batch cached and a small batch's pruning prefixes; the plan. -#}
{% macro _erase_tombstones(ctx) -%}
    {#- 3. tombstones first: nothing re-ingests these subjects from here on -#}
    {%- do run_query(gdpr_lakehouse._tombstone_sql(ctx)) -%}
    {%- do gdpr_lakehouse._crash_point('tombstone') -%}
    {#- the plan, savepoint copies included, read only now: a savepoint registered from
        here on re-erases its copy with these tombstones (it reads them after copying);
        one registered before is in the plan -#}
    {%- set plan = gdpr_lakehouse.erasure_plan() -%}
    {%- do print('gdpr_erase: batch ' ~ ctx.batch ~ ': ' ~ ctx.claimed | length ~ ' request(s), '
        ~ plan | length ~ ' relation(s) in the plan' ~ ('; resuming the interrupted batch' if ctx.get('resumed') else '')) -%}
    {#- the batch, with each subject's pseudonym from its tombstone, computed once for
        every write and check below (_cache_batch) -#}
    {%- do ctx.update({'batch_cache': gdpr_lakehouse._cache_batch(ctx)}) -%}
    {#- a small batch reads only the files that can hold its subjects -#}
    {%- do ctx.update({'prune_prefixes': gdpr_lakehouse._pruning_prefixes(ctx)}) -%}
    {%- if ctx.prune_prefixes is not none -%}
        {%- do gdpr_lakehouse._pruning_session(true) -%}
    {%- endif -%}
    {{ return(plan) }}
{%- endmacro %}
