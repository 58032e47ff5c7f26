{#- What a stored key is bound to, as SQL bytes (the additional authenticated data of
    its wrap): a subject's key to the subject's pseudonym (owner_expr: the vault's
    subject_pseudonym of its row), a system key to its name (system_key, e.g.
    'tombstone'). A wrapped key copied to another subject's row does not open there.
    encrypt_pii, decrypt_pii, keyed_hash and wrap_key take it. -#}
{% macro key_binding(owner_expr=none, system_key=none) -%}
    {{ return(adapter.dispatch('key_binding', 'gdpr_lakehouse')(owner_expr, system_key)) }}
{%- endmacro %}

{% macro spark__key_binding(owner_expr=none, system_key=none) -%}
    {%- if (owner_expr is none) == (system_key is none) or (owner_expr is not none and not (owner_expr is string and owner_expr)) -%}
        {%- do exceptions.raise_compiler_error("key_binding: give the subject's pseudonym (owner_expr) or a system key's name (system_key), one of them") -%}
    {%- endif -%}
    {%- if system_key is not none -%}
        {%- if not modules.re.match('^[a-z_]{1,40}$', system_key | string) -%}
            {%- do exceptions.raise_compiler_error("key_binding: system_key " ~ (system_key | string)[:40] ~ " is not a system key name (a-z, _)") -%}
        {%- endif -%}
        {{ return("encode('system/" ~ system_key ~ "', 'utf-8')") }}
    {%- endif -%}
    {{ return("encode(concat('subject/', " ~ owner_expr ~ "), 'utf-8')") }}
{%- endmacro %}
