{{ config(tags=['compliance']) }}
{#- Every Delta table records its changes (the vault alone, by design, does not). -#}
{{ gdpr_lakehouse.problems_as_rows(
    gdpr_lakehouse.cdf_problems(gdpr_lakehouse.cdf_relations_from_graph() if execute else []),
    ['relation_name', 'problem']) }}
