{#- Step 7 of gdpr_erase: evidence per request and relation, recounted from the erasure commits; then the requests whose every relation is done are erased, their tombstones unlinked, the batch released. -#}
{% macro _erase_complete(outcomes, ctx) -%}
    {#- 7. evidence per request and relation, recounted from the erasure commits; then
        requests whose every relation is done are erased -#}
    {%- do run_query(gdpr_lakehouse._evidence_sql(outcomes, ctx)) -%}
    {%- do gdpr_lakehouse._crash_point('evidence') -%}
    {%- do run_query(gdpr_lakehouse._complete_requests_sql(ctx)) -%}
    {%- do run_query(gdpr_lakehouse._unlink_erased_sql(ctx)) -%}
    {%- do gdpr_lakehouse._release_batch(ctx) -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
{%- endmacro %}
