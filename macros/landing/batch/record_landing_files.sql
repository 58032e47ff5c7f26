{#- Post-hook of a CDC bronze model: record this build's files of `entity` in the
    ledger, after the model's MERGE committed. Records nothing when the batch was not
    listed by this invocation. -#}
{% macro record_landing_files(entity) -%}
    {{ return(adapter.dispatch('record_landing_files', 'gdpr_lakehouse')(entity)) }}
{%- endmacro %}

{% macro spark__record_landing_files(entity) -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {#- the models that read the batch before bronze must have run with it, or the
        file's delete markers, rejected events or vault keys would be missing -#}
    {%- set missing = [] -%}
    {%- for name in gdpr_lakehouse.landing_batch_readers() -%}
        {%- if 'model.' ~ gdpr_lakehouse.engine_package() ~ '.' ~ name not in selected_resources -%}
            {%- do missing.append(name) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if missing -%}
        {%- do print(model.name ~ ': ran without ' ~ missing | join(', ') ~ '; '
            ~ ('it read no new landing file' if 'bronze_landing_batch' in missing else 'the landing files it read are not recorded as ingested')
            ~ ' (dbt build, or dbt run --select +' ~ model.name ~ ', reads and records them)') -%}
        {{ return('') }}
    {%- endif -%}
    {%- set batch = ref('bronze_landing_batch') -%}
    {%- set ledger = ref('bronze_landing_ledger') -%}
    {%- set version = gdpr_lakehouse.latest_delta_version(this) -%}
    {%- set landing = source('landing', entity) -%}
    {#- a full refresh read every file again (the whole view): each file the ledger holds
        as ingested is recorded anew from that read, and one it could not read is no
        longer in bronze: rejected, and read again by the next build -#}
    {%- set full = should_full_refresh() -%}
    {%- set staged = gdpr_lakehouse._landing_batch_view(landing, create_it=false, whole=full) -%}
    {%- set sql -%}
        merge into {{ ledger }} as ledger
        using (
            select
                batch.entity,
                batch.file_path,
                batch.file_size,
                batch.file_modified_at,
                files_read.rows_read,
                files_read.rows_hash,
                case when batch.file_issue is null and files_read.rows_read is not null
                    and waiting.events is null then 'ingested' else 'rejected' end as status,
                coalesce(
                    batch.file_issue,
                    case when files_read.rows_read is null then
                        'unreadable: no row could be read (not a Parquet file, empty, or a column whose type cannot be read as the source yml declares; the Spark log names the column)'
                    end,
                    case when waiting.events is not null then
                        concat(cast(waiting.events as string), ' event(s) wait for a vault key (build privacy_subject_keys with bronze); read again at the next build')
                    end
                ) as issue,
                cast({{ version }} as bigint) as bronze_version,
                current_timestamp() as recorded_at
            from (
                select entity, file_path, file_size, file_modified_at, file_issue
                from {{ batch }}
                where entity = '{{ entity }}' and invocation_id = '{{ invocation_id }}'
                {%- if full %}
                union all
                select entity, file_path, file_size, file_modified_at, cast(null as string) as file_issue
                from {{ ledger }}
                where
                    entity = '{{ entity }}' and status = 'ingested'
                    and file_path not in (select file_path from {{ batch }} where entity = '{{ entity }}')
                {%- endif %}
            ) as batch
            left join (
                {#- the rows the readers read: the batch staged once (macro landing_rows),
                    never the files again (a file skipped then and readable now would be
                    counted as read); a missing stage fails the hook, and nothing is recorded -#}
                select _metadata.file_path as file_path, count(*) as rows_read, bit_xor(xxhash64(to_json(struct(*)))) as rows_hash
                from {{ staged }}
                group by _metadata.file_path
            ) as files_read
                on batch.file_path = files_read.file_path
            left join (
                {#- events that will apply once the vault keys their subject: the file is read again -#}
                select source_file, count(*) as events
                from {{ ref('bronze_rejected_events') }}
                where entity = '{{ entity }}' and reason = 'no key in the vault for the subject'
                group by source_file
            ) as waiting
                on {{ gdpr_lakehouse._landing_file_name(entity, 'batch.file_path') }} = waiting.source_file
        ) as files
        on ledger.file_path = files.file_path
        when matched then update set *
        when not matched then insert *
    {%- endset -%}
    {#- the commit is the ledger's, written by this model's post-hook -#}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='build',
        extra={'node': 'model.' ~ gdpr_lakehouse.engine_package() ~ '.bronze_landing_ledger', 'written_by': model.unique_id})) -%}
    {#- bronze models run in parallel on a cluster (threads > 1): their ledger MERGEs
        race, and a conflict is retried; still losing, the files stay unrecorded and the
        next build reads them again -#}
    {%- set written = gdpr_lakehouse.run_with_conflict_retry(sql) -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- do gdpr_lakehouse.release_landing_batch(landing) -%}
    {%- if full and written.done -%}
        {%- set lost = run_query("select count(*) from " ~ ledger ~ " where entity = '" ~ entity ~ "' and status = 'rejected'"
            ~ " and bronze_version = " ~ version ~ " and file_path not in (select file_path from " ~ batch ~ " where entity = '" ~ entity ~ "')").columns[0].values()[0] -%}
        {%- if lost -%}
            {%- do print(model.name ~ ': the full refresh could not read ' ~ lost ~ ' landing file(s) the ledger held as ingested; their events are not in '
                ~ this ~ ' until the files can be read (recorded rejected in ' ~ ledger ~ '; read again by the next build)') -%}
        {%- endif -%}
    {%- endif -%}
    {%- if not written.done -%}
        {%- do print(model.name ~ ': the ledger write lost ' ~ written.attempts ~ ' commit races; its landing files are read again by the next build') -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
