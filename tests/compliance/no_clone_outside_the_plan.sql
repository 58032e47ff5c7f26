{{ config(tags=['compliance'], meta={'fix': 'DROP TABLE each clone named; to keep a copy of a relation, take a savepoint (dbt run-operation savepoint): erasure covers its copy'}) }}
{#- No table of the catalog outside the erasure plan is a clone of a relation in it: a
    shallow clone keeps reading the files its source held when it was made, which
    erasure does not reach (macro clone_problems). -#}
{{ gdpr_lakehouse.problems_as_rows(gdpr_lakehouse.clone_problems() if execute else [], ['relation_name', 'problem']) }}
