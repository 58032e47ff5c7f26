{#- In gdpr_erase, after the writes: a subject erased before and requested again may have been brought back by a rollback made outside the engine, so every tombstone is re-applied (reapply_erasures). -#}
{% macro _erase_reapply_earlier(ctx) -%}
    {#- a subject erased before (its pseudonym now only a keyed hash in its tombstone)
        is found again only by hashing each row's key: a rollback made outside the
        engine may have brought them back, so every tombstone is re-applied to every
        relation of the plan (reapply_erasures) -#}
    {%- if gdpr_lakehouse.scalar_query("select count(*) from " ~ ctx.requests ~ " as earlier where earlier.status in "
          ~ gdpr_lakehouse.request_status_in('fulfilled') ~ " and earlier.subject_id in (select subject_id from ("
          ~ gdpr_lakehouse._batch_base(ctx) ~ ") as batch)", 0) | int > 0 -%}
        {%- do gdpr_lakehouse.reapply_erasures() -%}
        {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='erase', request_ids=ctx.request_ids, batch_id=ctx.batch)) -%}
    {%- endif -%}
{%- endmacro %}
