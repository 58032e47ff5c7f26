{#
    Exactly once per landed file. A build reads only the landing files it has not
    ingested yet:

      landing.landing_files      every file under the landing zone (binaryFile listing:
                                 path, size, time; contents never read)
      bronze.landing_batch       this build's files: listed, minus the files the ledger
                                 records as ingested (same path and size), stamped with
                                 the dbt invocation that listed them
      vault, delete markers,     read only the batch's files, by a literal list of
      rejected events, bronze    paths on _metadata.file_path (Spark prunes every other
                                 file before it opens it)
      bronze.landing_ledger      one row per file: written by each bronze model's
                                 post-hook (record_landing_files) right after its MERGE

    A file is recorded as ingested only by the post-hook of its entity's bronze model,
    only when the batch was listed by the same dbt invocation and only when that
    invocation selected every model that reads the batch before bronze (the vault, the
    delete markers, the rejected events): a bronze model that failed, did not run, ran
    alone or read a stale batch records nothing, and its files are read
    again by the next build (the MERGE applies an event only when it is newer than the
    row's state, so a file read twice changes nothing). A file Spark cannot read (not
    Parquet, a column whose type cannot be cast; the landing tables skip it with
    ignoreCorruptFiles) or whose name has characters outside the allowed set is
    recorded `rejected` with the reason, and listed again at every build until it is
    fixed (replaced: its size changes) or removed. So is a file with an event waiting
    for a vault key (bronze run without the vault): it is read again at the next build.
    Identity is the path and the size: the same file landed again is a no-op; a file
    replaced under the same path by one of another size is read again.
#}

{#- This dbt invocation's id (the batch is stamped with it). -#}
{% macro current_invocation() -%}
    {{ return(invocation_id) }}
{%- endmacro %}

{#- The models that read a build's landing files before the CDC bronze models; a file
    is recorded as ingested only by a run that selected them all. -#}
{% macro landing_batch_readers() -%}
    {{ return(['bronze_landing_batch', 'privacy_subject_keys', 'bronze_cdc_deletes', 'bronze_rejected_events']) }}
{%- endmacro %}

{#- Characters a landing file's path may have: it is written into SQL as a literal. -#}
{% macro landing_path_pattern() -%}
    {{ return('^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9_./:=@+-]+$') }}
{%- endmacro %}

{#- The predicate that keeps the rows of this build's files of `entity` (a landing
    table's name), on `alias` (a relation alias, or '' for none): a literal list of
    paths, or false when the batch has none. -#}
{% macro landing_batch_predicate(entity, alias='') -%}
    {%- set batch = ref('bronze_landing_batch') -%}
    {%- set ledger = ref('bronze_landing_ledger') -%}
    {%- if not modules.re.match('^[a-z_][a-z0-9_]*$', entity) -%}
        {%- do exceptions.raise_compiler_error("landing_batch_predicate: entity " ~ entity[:64] ~ " is not a landing table name") -%}
    {%- endif -%}
    {%- set column = (alias ~ '.' if alias else '') ~ '_metadata.file_path' -%}
    {%- if not execute -%}
        {{ return(column ~ ' is null') }}
    {%- endif -%}
    {%- set rows = run_query("select file_path from " ~ batch ~ " where entity = '" ~ entity
        ~ "' and file_issue is null order by file_path") -%}
    {%- set quoted = [] -%}
    {%- for path in rows.columns[0].values() -%}
        {%- if not modules.re.match(gdpr_lakehouse.landing_path_pattern(), path) -%}
            {%- do exceptions.raise_compiler_error("landing_batch_predicate: the batch holds a path with characters outside the allowed set: " ~ path[:120]) -%}
        {%- endif -%}
        {%- do quoted.append("'" ~ path ~ "'") -%}
    {%- endfor -%}
    {{ return(column ~ ' in (' ~ quoted | join(', ') ~ ')' if quoted else 'false') }}
{%- endmacro %}

{#- A landing table's rows, only those of this build's files when batch_only: a
    relation to select from. -#}
{% macro landing_rows(relation, batch_only) -%}
    {%- if batch_only -%}
        {{ return('(select * from ' ~ relation ~ ' where ' ~ gdpr_lakehouse.landing_batch_predicate(relation.identifier) ~ ')') }}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}

{#- Post-hook of a CDC bronze model: record this build's files of `entity` in the
    ledger, after the model's MERGE committed. Records nothing when the batch was not
    listed by this invocation. -#}
{% macro record_landing_files(entity) -%}
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
            from {{ batch }} as batch
            left join (
                {#- bit_xor(xxhash64(to_json(struct(*)))) makes Spark decode every column of every row: a
                    file with a column it cannot read as declared is skipped here as
                    it was by bronze, never counted as read -#}
                select _metadata.file_path as file_path, count(*) as rows_read, bit_xor(xxhash64(to_json(struct(*)))) as rows_hash
                from {{ source('landing', entity) }}
                where {{ gdpr_lakehouse.landing_batch_predicate(entity) }}
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
                on element_at(split(batch.file_path, '/'), -1) = waiting.source_file
            where batch.entity = '{{ entity }}' and batch.invocation_id = '{{ invocation_id }}'
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
    {%- if not written.done -%}
        {%- do print(model.name ~ ': the ledger write lost ' ~ written.attempts ~ ' commit races; its landing files are read again by the next build') -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
