{#- The relations and settings every step of gdpr_erase reads (its ctx); the batch id is this invocation's until a crashed batch is resumed. -#}
{% macro _erase_context() -%}
    {%- set ctx = {
        'requests': gdpr_lakehouse._control_relation('privacy_erasure_requests'),
        'evidence': gdpr_lakehouse._control_relation('privacy_erasure_evidence'),
        'tombstones': gdpr_lakehouse._control_relation('privacy_erasure_tombstones'),
        'holds': gdpr_lakehouse._control_relation('privacy_legal_holds'),
        'vault': gdpr_lakehouse._control_relation('privacy_subject_keys'),
        'system_keys': gdpr_lakehouse._control_relation('privacy_system_keys'),
        'batch': invocation_id,
        'pruning': gdpr_lakehouse._pruning_settings(),
    } -%}
    {{ return(ctx) }}
{%- endmacro %}
