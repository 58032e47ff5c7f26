{#
    Exactly once per landed file. A build reads only the landing files it has not
    ingested yet:

      landing.landing_files      every file under the landing zone (binaryFile listing:
                                 path, size, time; contents never read)
      bronze.landing_batch       this build's files: listed, minus the files the ledger
                                 records as ingested (same path, size, time), stamped with
                                 the dbt invocation that listed them
      vault, delete markers,     read the batch's files once per invocation (a literal
      rejected events, bronze    list of paths on _metadata.file_path: Spark prunes every
                                 other file before it opens it), from one cached view
                                 per landing table (landing_rows)
      bronze.landing_ledger      one row per file: written by each bronze model's
                                 post-hook (record_landing_files) right after its MERGE,
                                 its counts and hash from that same cached read

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
    fixed (replaced) or removed. So is a file with an event waiting
    for a vault key (bronze run without the vault): it is read again at the next build.
    Identity is the path, the size and the modification time: a file replaced under the
    same path, even by one of the same size, is read again (the same file landed again is
    read once more and changes nothing: an event applies only when newer).
#}

{#- This dbt invocation's id (the batch is stamped with it). -#}
{% macro current_invocation() -%}
    {{ return(adapter.dispatch('current_invocation', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__current_invocation() -%}
    {{ return(invocation_id) }}
{%- endmacro %}
