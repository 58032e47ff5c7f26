{#
    dbt run-operation bind_ciphertexts

    Once, on a lakehouse made before keys and ciphertexts were bound to what they belong
    to (every other command refuses it until then, naming this one):
      1. every subject key in the vault is wrapped again for its subject (the
         pseudonym's binding, macro key_binding), the tombstone key for its name, in one
         MERGE per table: a key already bound is left as it is;
      2. every encrypted column of every relation of the erasure plan (meta.privacy
         pii_columns; savepoint copies too) and the pseudonym a running erasure's
         tombstone holds: a value is decrypted unbound and encrypted again for its
         subject and column (macro encrypt_pii), one INSERT OVERWRITE per relation. A
         value already bound, a NULL, and a value whose subject has no key any more
         (shredded: unreadable either way) are kept; a value that opens neither way
         stops the relation's statement and nothing of it is written;
      3. the vault records gdpr_lakehouse.ciphertext_binding.
    Idempotent and resumable: each step skips what is bound, so a rerun after a crash
    finishes the job. Every commit is tagged (purpose bind_ciphertexts). Older versions
    in the tables' history keep unbound values until the purge's VACUUM removes them,
    still encrypted under the same keys, so erasure shreds them as before.
#}
{% macro bind_ciphertexts() -%}
    {%- do gdpr_lakehouse._reject_unknown_args('bind_ciphertexts', kwargs, []) -%}
    {{ return(adapter.dispatch('bind_ciphertexts', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__bind_ciphertexts() -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- do gdpr_lakehouse.assert_key_envelope(bound=false) -%}
    {%- set vault = gdpr_lakehouse._vault_relation() -%}
    {%- if vault is none -%}
        {%- do log('bind_ciphertexts: no vault yet; a new lakehouse binds its keys and ciphertexts from the start', info=true) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set envelope = gdpr_lakehouse.key_envelope() -%}
    {%- set system_keys = gdpr_lakehouse._control_relation('privacy_system_keys') -%}
    {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='bind_ciphertexts')) -%}
    {%- if envelope -%}
        {%- for table, key_column, match, binding, where in [
              (vault, 'data_key', 'subject_id', gdpr_lakehouse.key_binding('subject_pseudonym'), "left(subject_id, 2) != '__'"),
              (system_keys, 'key_value', 'key_name', gdpr_lakehouse.key_binding(system_key='tombstone'), "key_name = 'tombstone'")] -%}
            {%- set sql -%}
                merge into {{ table }} as stored
                using (
                    select {{ match }}, {{ gdpr_lakehouse._bind_key(key_column, binding) }} as bound
                    from {{ table }}
                    where {{ where }} and not {{ gdpr_lakehouse._key_opens(key_column, binding) }}
                ) as unbound
                on stored.{{ match }} = unbound.{{ match }}
                when matched then update set stored.{{ key_column }} = unbound.bound
            {%- endset -%}
            {%- do gdpr_lakehouse.run_with_conflict_retry(sql) -%}
            {%- do log('bind_ciphertexts: ' ~ table ~ ': keys bound', info=true) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- for step in gdpr_lakehouse.erasure_plan() if step.action != 'shred' -%}
        {%- set privacy = (graph.nodes[step.node].config.meta or {}).get('privacy') or {} -%}
        {%- set stored = adapter.get_relation(database=none, schema=step.relation.schema, identifier=step.relation.identifier) -%}
        {%- if stored is not none -%}
            {%- set columns = adapter.get_columns_in_relation(stored) -%}
            {%- set encrypted = [] -%}
            {%- for column in columns if column.name in (privacy.get('pii_columns') or []) and column.dtype | lower == 'binary' -%}
                {%- do encrypted.append(column.name) -%}
            {%- endfor -%}
            {%- if encrypted -%}
                {%- set match = 'subject_pseudonym' if step.key_kind == 'pseudonym' else 'subject_id' -%}
                {%- set selected = [] -%}
                {%- for column in columns -%}
                    {%- if column.name in encrypted -%}
                        {%- do selected.append(gdpr_lakehouse._bound_value('rows.`' ~ column.name ~ '`', 'vault.data_key', 'vault.subject_pseudonym', column.name, none, step.relation_name)
                            ~ ' as `' ~ column.name ~ '`') -%}
                    {%- else -%}
                        {%- do selected.append('rows.`' ~ column.name ~ '`') -%}
                    {%- endif -%}
                {%- endfor -%}
                {%- set sql -%}
                    insert overwrite {{ step.relation }}
                    select {{ selected | join(', ') }}
                    from {{ step.relation }} as rows
                    left join {{ vault }} as vault on cast(rows.`{{ step.key }}` as string) = vault.{{ match }}
                {%- endset -%}
                {%- do gdpr_lakehouse.run_with_conflict_retry(sql) -%}
                {%- do log('bind_ciphertexts: ' ~ step.relation_name ~ ': ' ~ encrypted | join(', ') ~ ' bound', info=true) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set tombstones = gdpr_lakehouse._control_relation('privacy_erasure_tombstones') -%}
    {%- set sql -%}
        merge into {{ tombstones }} as stored
        using (
            select subject_hash, {{ gdpr_lakehouse._bound_value('pseudonym_enc', gdpr_lakehouse.tombstone_key(system_keys), 'subject_hash', 'pseudonym_enc',
                gdpr_lakehouse.key_binding(system_key='tombstone'), tombstones) }} as bound
            from {{ tombstones }}
            where pseudonym_enc is not null
        ) as running
        on stored.subject_hash = running.subject_hash
        when matched then update set stored.pseudonym_enc = running.bound
    {%- endset -%}
    {%- do gdpr_lakehouse.run_with_conflict_retry(sql) -%}
    {%- do run_query("alter table " ~ vault ~ " set tblproperties ('gdpr_lakehouse.ciphertext_binding' = '" ~ gdpr_lakehouse._ciphertext_binding_version() ~ "')") -%}
    {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
    {%- do log('bind_ciphertexts: ' ~ vault ~ ' records gdpr_lakehouse.ciphertext_binding = ' ~ gdpr_lakehouse._ciphertext_binding_version(), info=true) -%}
{%- endmacro %}

{#- A stored value as bound_ciphertexts leaves it: kept when NULL, keyless or already
    bound; else decrypted unbound and encrypted again for its owner and column; a value
    that opens neither way stops the statement. -#}
{% macro _bound_value(cipher_expr, key_expr, owner_expr, column, key_binding, where) -%}
    case
        when {{ cipher_expr }} is null or {{ key_expr }} is null then {{ cipher_expr }}
        when {{ gdpr_lakehouse.decrypt_pii(cipher_expr, key_expr, owner_expr, column, required=false, key_binding=key_binding) }} is not null then {{ cipher_expr }}
        else coalesce(
            {{ gdpr_lakehouse.encrypt_pii(gdpr_lakehouse.decrypt_pii(cipher_expr, key_expr, owner_expr, column, key_binding=key_binding, unbound=true), key_expr, owner_expr, column, key_binding=key_binding) }},
            raise_error('bind_ciphertexts: a value of {{ where }}.{{ column }} opens with the subject key neither bound nor unbound; nothing of {{ where }} was written')
        )
    end
{%- endmacro %}
