{{ config(tags=['compliance', 'audit_completeness'], meta={'fix': 'python -m python_jobs.audit_stream --once'}) }}
{#- Every commit version of every relation whose Change Data Feed is on is in
    audit.change_log, exactly once per change type. Holds after
    `python -m python_jobs.audit_stream --once`, so `dbt build` leaves it out (its
    own commits are not audited yet; selectors.yml): run it with
    `dbt test --select tag:compliance`. -#}
{{ gdpr_lakehouse.audit_completeness_sql(ref('audit_change_log')) }}
