{{ config(tags=['compliance']) }}
{#- Every Delta table records its changes; by design the vault (keys must die at once)
    and the audit log (it is the record of changes) do not. -#}
{{ gdpr_lakehouse.problems_as_rows(
    gdpr_lakehouse.cdf_problems(gdpr_lakehouse.cdf_relations_from_graph() if execute else []),
    ['relation_name', 'problem']) }}
