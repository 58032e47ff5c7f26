{{ config(tags=['compliance']) }}
{#- Every Delta table records its changes; by design the vault and the system keys (keys stay out of change data)
    and the audit log (it is the record of changes) do not. -#}
{{ gdpr_lakehouse.problems_as_rows(
    gdpr_lakehouse.cdf_problems(gdpr_lakehouse.cdf_relations_from_graph() if execute else []),
    ['relation_name', 'problem']) }}
