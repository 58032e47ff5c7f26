{#- Steps 1-2 of gdpr_erase: legal holds (_erase_hold_requests), then the open requests claimed as one batch (a batch a crashed run left is resumed under its own id); the request ids claimed, [] when there is none. -#}
{% macro _erase_claim_batch(ctx, ids) -%}
    {#- 1-2. legal holds, then claim the batch. A batch a crashed run left `erasing`
        (or a conflict left `failed`) is resumed under its own id: this run's commits
        carry it too, and new requests join it, so every commit of the batch, whichever
        run made it, is found by its tag and counted once. -#}
    {%- set interrupted = run_query("select distinct batch_id from " ~ ctx.requests
        ~ " where status in " ~ gdpr_lakehouse.request_status_in('begun') ~ " and batch_id is not null order by batch_id").columns[0].values() | list -%}
    {%- if interrupted -%}
        {%- if not modules.re.match('^[A-Za-z0-9_-]{1,64}$', interrupted[0] | string) -%}
            {%- do exceptions.raise_compiler_error("gdpr_erase: " ~ ctx.requests ~ " holds an interrupted batch id that is not one gdpr_erase writes: "
                ~ (interrupted[0] | string)[:80] ~ "; fix that row by hand") -%}
        {%- endif -%}
        {%- do ctx.update({'batch': interrupted[0], 'resumed': true}) -%}
    {%- endif -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='erase', batch_id=ctx.batch)) -%}
    {%- do gdpr_lakehouse._erase_hold_requests(ctx, ids) -%}
    {%- do run_query(gdpr_lakehouse._claim_requests_sql(ctx, ids)) -%}
    {%- do gdpr_lakehouse._crash_point('claim') -%}
    {%- set claimed = run_query(gdpr_lakehouse._batch_base(ctx) ~ ' order by subject_id') -%}
    {%- set held = run_query("select request_id, subject_id, status_reason from " ~ ctx.requests ~ " where status = 'held'"
        ~ gdpr_lakehouse._subject_filter(ids) ~ " order by subject_id") -%}
    {%- if held.rows | length > 0 -%}
        {%- do gdpr_lakehouse.print_table(held.rows | length ~ ' request(s) held, not erased:', ['request_id', 'subject_id', 'reason'], held.rows) -%}
    {%- endif -%}
    {%- if claimed.rows | length == 0 -%}
        {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- do print('gdpr_erase: no pending erasure request' ~ (' for the subjects given' if ids else '') ~ '; nothing to do.') -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set request_ids = claimed.columns['request_id'].values() | list -%}
    {#- the batch, and any other a crashed run of an older version left behind -#}
    {%- set batches = (claimed.columns['batch_id'].values() | list) + interrupted -%}
    {%- set batches = batches | unique | list -%}
    {%- set types = claimed.columns['subject_type'].values() | unique | list -%}
    {#- one request: each erasure commit's own metrics are that request's rows; more:
        the commits' Change Data Feed splits them per request -#}
    {%- do ctx.update({'request_ids': request_ids if request_ids | length <= 50 else none, 'batches': batches, 'types': types,
                       'single': request_ids | length == 1}) -%}
    {%- do ctx.update({'claimed': request_ids}) -%}
    {{ return(request_ids) }}
{%- endmacro %}
