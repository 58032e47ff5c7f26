{#- Step 1 of gdpr_erase: the requests of subjects under an active legal hold become `held` and are left alone; one whose erasure had begun before the hold is finished, and said so. -#}
{% macro _erase_hold_requests(ctx, ids) -%}
    {%- if gdpr_lakehouse.scalar_query('select count(*) from ' ~ ctx.holds ~ ' where released_at is null', 0) | int > 0 -%}
        {%- set late = run_query("select requests.request_id, requests.subject_id, min(holds.reason) from " ~ ctx.requests ~ " as requests inner join "
            ~ ctx.holds ~ " as holds on requests.subject_id = holds.subject_id and holds.released_at is null where "
            ~ gdpr_lakehouse._erasure_begun(ctx) ~ gdpr_lakehouse._subject_filter(ids, 'requests.subject_id')
            ~ " group by requests.request_id, requests.subject_id order by requests.subject_id") -%}
        {%- if late.rows | length > 0 -%}
            {%- do gdpr_lakehouse.print_table(late.rows | length ~ ' request(s) under a legal hold placed after their erasure had begun '
                ~ '(tombstone written, rows or key possibly gone: that cannot be undone); finishing them:', ['request_id', 'subject_id', 'hold'], late.rows) -%}
        {%- endif -%}
        {%- do run_query(gdpr_lakehouse._hold_requests_sql(ctx, ids)) -%}
    {%- endif -%}
{%- endmacro %}
