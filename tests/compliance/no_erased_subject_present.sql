{{ config(tags=['compliance'], meta={'fix': 'dbt run-operation reapply_erasures'}) }}
{#- No erased subject is present anywhere: for every relation of the erasure plan,
    rows whose key is an erased subject's id or pseudonym (every tombstone). Fails
    after a rollback done by hand (a bare RESTORE, a copy from backup) that brought a
    forgotten person back. The fix: `dbt run-operation reapply_erasures` re-applies every
    tombstone to every relation of the plan, savepoint copies included (meta.fix). -#}
{%- set ctx = {
    'tombstones': ref('privacy_erasure_tombstones'),
    'requests': ref('privacy_erasure_requests'),
    'vault': ref('privacy_subject_keys'),
    'system_keys': ref('privacy_system_keys'),
} -%}
{%- set steps = gdpr_lakehouse._present_steps(gdpr_lakehouse.erasure_plan()) if execute else [] -%}
{{ gdpr_lakehouse._tombstoned_rows_sql(steps, ctx) }}
