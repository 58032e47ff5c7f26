{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{{
    config(
        unique_key='file_path',
        full_refresh=false,
        cdc_delete_condition='',
        cdc_sequence_by=[],
        on_schema_change='append_new_columns',
    )
}}

{#-
    The landing ledger: one row per landing file a build has read, written by the
    post-hook of its entity's bronze model (macro record_landing_files in
    macros/landing/batch/) right after that model's MERGE. This model only
    makes the table: it adds no row. Never rebuilt (full_refresh=false): a rebuilt
    ledger would make the next build read the whole landing zone again (harmless, as
    every bronze MERGE is idempotent, but slow). No personal data: paths, sizes, counts.
-#}
select
    cast(null as string) as entity,
    cast(null as string) as file_path,
    cast(null as bigint) as file_size,
    cast(null as timestamp) as file_modified_at,
    cast(null as bigint) as rows_read,
    cast(null as bigint) as rows_hash,
    cast(null as string) as status,
    cast(null as string) as issue,
    cast(null as bigint) as bronze_version,
    cast(null as timestamp) as recorded_at
where false
