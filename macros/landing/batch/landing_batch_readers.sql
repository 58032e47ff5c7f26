{#- The models that read a build's landing files before the CDC bronze models; a file
    is recorded as ingested only by a run that selected them all. -#}
{% macro landing_batch_readers() -%}
    {{ return(adapter.dispatch('landing_batch_readers', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__landing_batch_readers() -%}
    {{ return(['bronze_landing_batch', 'privacy_subject_keys', 'bronze_cdc_deletes', 'bronze_rejected_events']) }}
{%- endmacro %}
