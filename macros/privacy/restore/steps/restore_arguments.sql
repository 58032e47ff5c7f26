{#- Step 1 of restore_version, before any statement: exactly one of version, timestamp or savepoint, each valid, cascade not with a savepoint, a reason fit for a commit tag; the validated values. -#}
{% macro _restore_arguments(version, timestamp, cascade, reason, savepoint, model) -%}
    {%- set cascade = gdpr_lakehouse._validate_flag(cascade, 'cascade') -%}
    {%- set reason = gdpr_lakehouse._validate_commit_reason(reason, 'restore_version') -%}
    {%- if savepoint is not none -%}
        {%- set savepoint = gdpr_lakehouse._validate_savepoint_name(savepoint, 'restore_version', model) -%}
        {%- if version is not none or timestamp is not none or cascade -%}
            {%- do exceptions.raise_compiler_error("restore_version: savepoint restores the model to the version its savepoint holds; give no "
                ~ "version, timestamp or cascade with it (restore each model from its own savepoint)") -%}
        {%- endif -%}
    {%- elif (version is none) == (timestamp is none) -%}
        {%- do exceptions.raise_compiler_error("restore_version: give exactly one of version (e.g. version: 10), timestamp (e.g. timestamp: \"2026-11-21 10:00:00\", UTC) or savepoint (e.g. savepoint: month_end_2026_01); got "
            ~ ('both version and timestamp' if version is not none else 'neither')) -%}
    {%- endif -%}
    {%- if savepoint is not none -%}
    {%- elif version is not none -%}
        {%- set version = gdpr_lakehouse._validate_whole(version, 'restore_version: version', 0, 999999999999) -%}
    {%- else -%}
        {%- set timestamp = gdpr_lakehouse._validate_timestamp_text(timestamp) -%}
    {%- endif -%}
    {{ return({'version': version, 'timestamp': timestamp, 'cascade': cascade, 'reason': reason, 'savepoint': savepoint}) }}
{%- endmacro %}
