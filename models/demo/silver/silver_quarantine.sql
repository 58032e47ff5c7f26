{{ config(enabled=gdpr_lakehouse.demo_enabled()) }}  {#- the demo lakehouse (var gdpr_lakehouse_demo) -#}
{#- Every row a quality rule rejected, with the rule: nothing is dropped silently.
    No personal data: the record id, the subject's pseudonym and the reason. -#}
with rejected as (
    {%- for entity, key, subject in [
        ('patients', 'patient_pseudonym', 'patient_pseudonym'),
        ('encounters', 'encounter_ref', 'patient_pseudonym'),
        ('users', 'user_pseudonym', 'user_pseudonym'),
        ('clicks', 'click_ref', 'user_pseudonym'),
        ('orders', 'order_ref', 'user_pseudonym'),
    ] %}
    select
        '{{ entity }}' as entity,
        {{ key }} as record_id,
        {{ subject }} as subject_pseudonym,
        quality_issue,
        source_seq
    from {{ ref('silver_' ~ entity ~ '_checked') }}
    where quality_issue is not null
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
),

final as (
    select
        entity,
        record_id,
        subject_pseudonym,
        quality_issue,
        source_seq,
        current_timestamp() as quarantined_at
    from rejected
)

select * from final
