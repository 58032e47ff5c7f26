{#- Like decrypt_pii, for a model that must not count or publish a row it cannot read:
    NULL stays NULL, but a ciphertext whose key is missing or wrong, or that was written
    for another row or column, stops the query (raise_error) instead of reading as NULL.
    Join the subject's key from the vault after leaving erased subjects out (their key is
    gone by design). `what` names the value in the error; it must be a plain name (no
    subject data). -#}
{% macro decrypt_pii_or_fail(cipher_expr, key_expr, owner_expr, column, what) -%}
    {{ return(adapter.dispatch('decrypt_pii_or_fail', 'gdpr_lakehouse')(cipher_expr, key_expr, owner_expr, column, what)) }}
{%- endmacro %}

{% macro spark__decrypt_pii_or_fail(cipher_expr, key_expr, owner_expr, column, what) -%}
    {%- if not (what is string and modules.re.match('^[A-Za-z0-9_.]{1,80}$', what)) -%}
        {%- do exceptions.raise_compiler_error("decrypt_pii_or_fail: what is " ~ (what | string)[:80]
            ~ "; it must be a plain name: letters, digits, '_' or '.', at most 80") -%}
    {%- endif -%}
    case when {{ cipher_expr }} is not null then coalesce(
        {{ gdpr_lakehouse.decrypt_pii(cipher_expr, key_expr, owner_expr, column) }},
        raise_error('{{ what }}: a ciphertext does not open: the key of a subject not erased is missing from the vault (privacy.subject_keys), or the value was not written for this subject and column {{ column }} (moved from another row or column); nothing was written')
    ) end
{%- endmacro %}
