{#- Before a command writes anything: the vars agree with the lakehouse's key mode, the
    vault's keys agree with the record, and with the envelope on the key-encryption key
    is there, and (bound) the lakehouse's keys and ciphertexts are bound to what they
    belong to (macro bind_ciphertexts migrates a lakehouse made before). on-run-start of
    every dbt run/build/test and first step of the operations. -#}
{% macro assert_key_envelope(bound=true) -%}
    {{ return(adapter.dispatch('assert_key_envelope', 'gdpr_lakehouse')(bound)) }}
{%- endmacro %}

{% macro spark__assert_key_envelope(bound=true) -%}
    {%- if execute -%}
        {%- set mode = gdpr_lakehouse.key_envelope() -%}
        {%- set vault = gdpr_lakehouse._vault_relation() -%}
        {%- if bound and vault is not none and not gdpr_lakehouse._ciphertexts_bound(vault) -%}
            {%- do exceptions.raise_compiler_error(vault ~ " holds keys, and this lakehouse's keys and ciphertexts are not bound to their subjects and columns "
                ~ "(table property gdpr_lakehouse.ciphertext_binding): it was made before bindings existed, and every command now reads bound ones. "
                ~ "Bind them once (idempotent, resumable): dbt run-operation bind_ciphertexts. Nothing was run") -%}
        {%- endif -%}
        {%- if vault is not none -%}
            {%- set expected = 60 if mode else 32 -%}
            {%- set odd = gdpr_lakehouse.scalar_query("select count(*) from " ~ vault ~ " where left(subject_id, 2) != '__' and length(data_key) != " ~ expected, 0) | int -%}
            {%- if odd > 0 -%}
                {%- do exceptions.raise_compiler_error(vault ~ " is recorded with key_envelope " ~ (mode | string | lower) ~ " but " ~ odd
                    ~ " of its keys are not " ~ expected ~ " bytes long (" ~ ('wrapped' if mode else 'plain') ~ "); the vault is inconsistent. Nothing was run") -%}
            {%- endif -%}
        {%- endif -%}
        {%- if mode -%}
            {#- the right key: one that unwraps the stored tombstone key and a few of
                the vault's keys (a lakehouse an older version made may hold its
                tombstone key plain: the vault's keys still show the KEK). A build
                under another KEK would wrap new keys with it, and the vault would hold
                keys no single KEK opens. -#}
            {%- set node = gdpr_lakehouse.engine_node('privacy_system_keys') -%}
            {%- set system_keys = adapter.get_relation(database=none, schema=node.schema, identifier=node.alias) -%}
            {%- set wrapped = [] -%}
            {%- if system_keys is not none -%}
                {%- do wrapped.append("select key_value as wrapped_key, " ~ gdpr_lakehouse.key_binding(system_key='tombstone') ~ " as binding from " ~ system_keys ~ " where key_name = 'tombstone' and length(key_value) = 60") -%}
            {%- endif -%}
            {%- if vault is not none -%}
                {%- do wrapped.append("select data_key as wrapped_key, " ~ gdpr_lakehouse.key_binding('subject_pseudonym') ~ " as binding from " ~ vault ~ " where left(subject_id, 2) != '__' and length(data_key) = 60 limit 3") -%}
            {%- endif -%}
            {%- if wrapped -%}
                {#- each stored key tried (opened or not, never returned); a wrap of one byte first
                    stops the query where the engine has no key-encryption key at all
                    (the error names the variable) -#}
                {%- set opened = gdpr_lakehouse.scalar_query("select concat(cast(count_if(opened) as string), '/', cast(count(*) as string), '/', cast(count(probe) as string)) from (select "
                    ~ (gdpr_lakehouse._key_opens('wrapped_key', 'binding') if bound else '(' ~ gdpr_lakehouse._key_opens('wrapped_key', 'binding') ~ ' or ' ~ gdpr_lakehouse._key_opens('wrapped_key', "x''") ~ ')') ~ " as opened, " ~ gdpr_lakehouse.wrap_key("x'00'", "x''") ~ " as probe from (("
                    ~ (wrapped | join(') union all (')) ~ ")) as stored) as tried", '0/0/0') -%}
                {%- set opened_count, wrapped_count = opened.split('/')[:2] -%}
                {%- if opened_count != wrapped_count -%}
                    {%- do exceptions.raise_compiler_error("the key-encryption key this command was given (environment variable "
                        ~ var('kek_env_var', 'LAKEHOUSE_KEK') ~ ", or the secret scope on Databricks) is not the one this lakehouse's keys were wrapped with: it does not unwrap "
                        ~ (wrapped_count | int - opened_count | int) ~ " of the " ~ wrapped_count ~ " stored keys it was tried on (" ~ ([system_keys, vault] | reject('none') | join(', '))
                        ~ "). Give it the key the lakehouse was made with. Nothing was run") -%}
                {%- endif -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
