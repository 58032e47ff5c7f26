{{ config(tags=['compliance']) }}
{#- No PII column is in any Delta table's file statistics (the log's min/max). -#}
{{ gdpr_lakehouse.problems_as_rows(
    gdpr_lakehouse.statistics_problems(gdpr_lakehouse.statistics_specs_from_graph() if execute else []),
    ['relation_name', 'column_name', 'problem']) }}
