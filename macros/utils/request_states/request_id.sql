{#- A new request id: <prefix>-<UTC yyyymmddThhmmss>-<10 hex digits of md5(salt)>. The one
    rule for every request the project records, made by the operations (request_erasure,
    request_access, restore_version, savepoint) and by the jobs (rectify,
    subject_access: python_jobs.request_states.new_request_id); request_id_pattern
    says what one looks like. The prefix names the kind: req (erasure), acc (access),
    rec (rectification), rst (a restore or a savepoint). -#}
{% macro request_id(kind, moment, salt) -%}
    {{ return(adapter.dispatch('request_id', 'gdpr_lakehouse')(kind, moment, salt)) }}
{%- endmacro %}

{% macro spark__request_id(kind, moment, salt) -%}
    {{ return(gdpr_lakehouse._request_id_prefix(kind) ~ '-' ~ moment.strftime('%Y%m%dT%H%M%S') ~ '-' ~ local_md5(salt | string)[:10]) }}
{%- endmacro %}

{% macro _request_id_prefix(kind) -%}
    {%- set prefixes = {'erasure': 'req', 'access': 'acc', 'rectification': 'rec', 'restore': 'rst'} -%}
    {%- if kind not in prefixes -%}
        {%- do exceptions.raise_compiler_error("request_id: no kind " ~ (kind | string)[:40] ~ "; kinds: " ~ (prefixes | list | join(', '))) -%}
    {%- endif -%}
    {{ return(prefixes[kind]) }}
{%- endmacro %}
