{#- The lakehouse's key mode (true: envelope on). Recorded on the vault when it is made
    (table property gdpr_lakehouse.key_envelope, post-hook record_key_envelope); a vault
    made before the property existed is read from its keys (32 bytes: plain; 60: a
    wrapped key, IV + key + tag). Only a new lakehouse (no vault yet, or an empty one)
    takes var key_envelope, and without it a new lakehouse wraps its keys: with them
    plain, a reader of privacy.system_keys holds the tombstone key and can hash source
    ids to their records. key_envelope: false makes a lakehouse without the guarantee.
    A var that disagrees with the record is an error: a command run in the wrong mode
    would derive keys from the wrong bytes. -#}
{% macro key_envelope() -%}
    {{ return(adapter.dispatch('key_envelope', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__key_envelope() -%}
    {%- set asked = gdpr_lakehouse._flag_var('key_envelope') -%}
    {#- parse, and `dbt compile` (which writes nothing and may run offline, as the unit
        tests of the Databricks macros do), render with the var alone -#}
    {%- set recorded = gdpr_lakehouse._recorded_key_envelope()
        if execute and flags.WHICH in ('run', 'build', 'test', 'seed', 'snapshot', 'run-operation', 'retry') else none -%}
    {%- if recorded is none -%}
        {{ return(true if asked is none else asked) }}
    {%- elif asked is not none and asked != recorded -%}
        {%- do exceptions.raise_compiler_error("var key_envelope is " ~ (asked | string | lower) ~ " but this lakehouse's vault was made with key_envelope "
            ~ (recorded | string | lower) ~ " (recorded on privacy.subject_keys as gdpr_lakehouse.key_envelope); nothing was run. "
            ~ "Drop the var: every command reads the mode from the vault") -%}
    {%- else -%}
        {{ return(recorded) }}
    {%- endif -%}
{%- endmacro %}

{#- The vault's recorded mode: true, false, or none (no vault, or no key to tell by).
    Read once per dbt invocation: every encrypt, decrypt and keyed hash asks for
    it (gdpr_erase of one subject asked 147 times, each a `show tblproperties`). A
    recorded mode cannot change (var key_envelope disagreeing with it is an error), so
    the first answer holds for the invocation; none (no vault yet) is not kept, so a
    first build reads the mode the vault records once it exists. -#}
{% macro _recorded_key_envelope() -%}
    {%- set vault = gdpr_lakehouse._vault_relation() -%}
    {%- if vault is none -%}{{ return(none) }}{%- endif -%}
    {%- set cache = gdpr_lakehouse._invocation_cache() -%}
    {%- set cache_key = 'recorded_key_envelope ' ~ vault -%}
    {%- if cache_key not in cache -%}
        {%- set recorded = gdpr_lakehouse._read_recorded_key_envelope(vault) -%}
        {%- if recorded is none -%}{{ return(none) }}{%- endif -%}
        {%- do cache.update({cache_key: recorded}) -%}
    {%- endif -%}
    {{ return(cache[cache_key]) }}
{%- endmacro %}

{% macro _read_recorded_key_envelope(vault) -%}
    {%- set properties = gdpr_lakehouse.tblproperties_of(vault) -%}
    {#- kept for _ciphertexts_bound, which asks next (one SHOW TBLPROPERTIES a command) -#}
    {%- do gdpr_lakehouse._invocation_cache().update({'vault properties ' ~ vault: properties}) -%}
    {%- set recorded = properties.get('gdpr_lakehouse.key_envelope') -%}
    {%- if recorded is not none -%}
        {%- if recorded not in ('true', 'false') -%}
            {%- do exceptions.raise_compiler_error(vault ~ " records gdpr_lakehouse.key_envelope = " ~ recorded[:20]
                ~ "; it must be true or false. Set it back with ALTER TABLE ... SET TBLPROPERTIES") -%}
        {%- endif -%}
        {{ return(recorded == 'true') }}
    {%- endif -%}
    {%- set lengths = run_query("select distinct length(data_key) from " ~ vault ~ " where left(subject_id, 2) != '__'").columns[0].values() | list -%}
    {%- if lengths | length == 0 -%}{{ return(none) }}{%- endif -%}
    {%- if lengths | length > 1 or lengths[0] | int not in (32, 60) -%}
        {%- do exceptions.raise_compiler_error(vault ~ " holds keys of " ~ lengths | join(', ') ~ " bytes: neither all plain (32) nor all wrapped (60); "
            ~ "the key mode cannot be told. Nothing was run") -%}
    {%- endif -%}
    {{ return(lengths[0] | int == 60) }}
{%- endmacro %}
