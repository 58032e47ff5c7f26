{#
    Every commit says why: tag the Delta commits that follow with `userMetadata`
    (actor, tool, command, invocation, model, purpose, request, and for a build, seed or
    snapshot the business day it closes), so DESCRIBE HISTORY
    and the audit log explain every version. Used as a pre-hook on every model, seed
    and snapshot; operations call it before they write. Pair with
    reset_commit_metadata() so a tag never outlives the work it describes.
#}
{% macro set_commit_metadata(purpose, request_id=none, reason=none, request_ids=none, batch_id=none, extra=none) -%}
    {{ return(adapter.dispatch('set_commit_metadata', 'gdpr_lakehouse')(purpose, request_id, reason, request_ids, batch_id, extra)) }}
{%- endmacro %}

{% macro spark__set_commit_metadata(purpose, request_id, reason, request_ids=none, batch_id=none, extra=none) -%}
    {%- set tag = gdpr_lakehouse._commit_metadata_json(purpose, request_id, reason, request_ids, batch_id, extra) -%}
    set spark.databricks.delta.commitInfo.userMetadata = {{ tag }}
{%- endmacro %}

{% macro _commit_metadata_json(purpose, request_id, reason, request_ids=none, batch_id=none, extra=none) -%}
    {%- set safe = '^[A-Za-z0-9_.:@/ +-]{1,200}$' -%}
    {%- set actor = env_var('LAKEHOUSE_ACTOR', env_var('USER', env_var('LOGNAME', 'unknown'))) -%}
    {%- set tag = {
        'actor': actor,
        'tool': 'dbt',
        'command': flags.WHICH,
        'invocation_id': invocation_id,
        'purpose': purpose,
    } -%}
    {%- if model is defined and model is mapping and model.get('unique_id') -%}
        {%- do tag.update({'node': model.unique_id}) -%}
    {%- endif -%}
    {#- the business day a build closes (macro business_date; as_of_business_date reads it) -#}
    {%- if purpose in ('build', 'seed', 'snapshot') -%}
        {%- do tag.update({'business_date': gdpr_lakehouse.business_date()}) -%}
    {%- endif -%}
    {%- if request_id is not none -%}{%- do tag.update({'request_id': request_id}) -%}{%- endif -%}
    {%- if batch_id is not none -%}{%- do tag.update({'batch_id': batch_id}) -%}{%- endif -%}
    {%- for key, value in (extra or {}).items() -%}{%- do tag.update({key: value}) -%}{%- endfor -%}
    {%- for value in (request_ids or []) -%}
        {%- if not modules.re.match(safe, value | string) -%}
            {%- do exceptions.raise_compiler_error("set_commit_metadata: request id " ~ (value | string)[:80] ~ " is not allowed in a commit tag") -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for key, value in tag.items() -%}
        {%- if value is none or not modules.re.match(safe, value | string) -%}
            {%- do exceptions.raise_compiler_error(
                "set_commit_metadata: " ~ key ~ " = " ~ (value | string)[:80] ~ " is not allowed in a commit tag; "
                ~ "use 1-200 characters from letters, digits, space and _ . : @ / + -"
            ) -%}
        {%- endif -%}
    {%- endfor -%}
    {#- free text (a restore's reason): quotes and unicode are fine inside the JSON, but
        no control character, backslash, semicolon (it ends a SET statement) or $ (SET
        substitutes ${...}) -#}
    {%- if reason is not none -%}
        {%- if not modules.re.match('^[^\\x00-\\x1f\\x7f\\\\;$]{1,300}$', reason | string) -%}
            {%- do exceptions.raise_compiler_error("set_commit_metadata: reason " ~ (reason | string)[:80] ~ " is not allowed in a commit tag; "
                ~ "use 1-300 characters without control characters, backslashes, semicolons or $ (Spark would substitute ${...})") -%}
        {%- endif -%}
        {%- do tag.update({'reason': reason | string}) -%}
    {%- endif -%}
    {%- if request_ids -%}{%- do tag.update({'request_ids': request_ids | list}) -%}{%- endif -%}
    {{ return(tojson(tag, sort_keys=true)) }}
{%- endmacro %}
