{{ config(
    tags=['compliance'],
    enabled=(target.type == 'databricks'),
    meta={'fix': 'REVOKE the privilege shown (or the schema or catalog grant it inherits from), then dbt build'}
) }}
{#- Databricks only (open-source Spark has no grants): no consumer group and not the
    PII reader group holds any privilege on a relation outside gold and the masked
    views, whether granted on the table or inherited from its schema or catalog. -#}
{{ gdpr_lakehouse.consumer_grants_on_restricted_sql() }}
