{{ config(tags=['compliance']) }}
{#- Every Delta table sets delta.deletedFileRetentionDuration and
    delta.logRetentionDuration, each no longer than the erasure deadline, so what an
    erasure leaves in history can be purged in time. -#}
{{ gdpr_lakehouse.problems_as_rows(
    gdpr_lakehouse.retention_problems(gdpr_lakehouse.delta_relations_from_graph() if execute else []),
    ['relation_name', 'property', 'problem']) }}
