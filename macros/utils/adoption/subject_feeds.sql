{#- A column or type name an adopter wrote: a plain SQL identifier, nothing else. -#}
{% macro _adopter_identifier(value, what) -%}
    {%- if value is not string or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}$', value) -%}
        {%- do exceptions.raise_compiler_error(what ~ " must be a plain name (letters, digits and _, a letter or _ first); got "
            ~ (value | tojson)[:80]) -%}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}

{#- The vault's feeds of subjects: the demo's landing zone (only this build's files on
    an incremental run) and every entry of var gdpr_lakehouse_subjects (read whole; the
    vault keeps only subjects it does not know yet). Each: {relation, subject_id,
    subject_type, batch_only}. Resolves source()/ref() while dbt parses, so the vault
    depends on every feed. -#}
{% macro subject_feeds() -%}
    {{ return(adapter.dispatch('subject_feeds', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__subject_feeds() -%}
    {%- set feeds = [] -%}
    {%- if gdpr_lakehouse.demo_enabled() -%}
        {%- do feeds.append({'relation': source('landing', 'patients'), 'subject_id': 'patient_id', 'subject_type': 'patient', 'batch_only': true}) -%}
        {%- do feeds.append({'relation': source('landing', 'users'), 'subject_id': 'user_id', 'subject_type': 'user', 'batch_only': true}) -%}
        {#- a patient known only from an encounter is a data subject too: bronze encrypts
            the encounter's diagnosis and cost under their key -#}
        {%- do feeds.append({'relation': source('landing', 'encounters'), 'subject_id': 'patient_id', 'subject_type': 'patient', 'batch_only': true}) -%}
        {#- and a user known only from a click or an order: bronze names them by the
            pseudonym of that key, never by the web shop's id, so a click or an order
            whose user lands later is matched to them then -#}
        {%- do feeds.append({'relation': source('landing', 'clicks'), 'subject_id': 'user_id', 'subject_type': 'user', 'batch_only': true}) -%}
        {%- do feeds.append({'relation': source('landing', 'orders'), 'subject_id': 'user_id', 'subject_type': 'user', 'batch_only': true}) -%}
    {%- endif -%}
    {%- set configured = var('gdpr_lakehouse_subjects', []) -%}
    {%- set usage = "; each entry is {source: [source_name, table_name]} or {ref: model_name}, with subject_id: <column> and subject_type: <word>" -%}
    {%- if configured is string or configured is mapping or configured is not iterable -%}
        {%- do exceptions.raise_compiler_error("var gdpr_lakehouse_subjects must be a list" ~ usage) -%}
    {%- endif -%}
    {%- for entry in configured -%}
        {%- set where = "var gdpr_lakehouse_subjects[" ~ loop.index0 ~ "]" -%}
        {%- if entry is not mapping or (entry.keys() | list | sort) not in (['ref', 'subject_id', 'subject_type'], ['source', 'subject_id', 'subject_type']) -%}
            {%- do exceptions.raise_compiler_error(where ~ " is " ~ (entry | tojson)[:120] ~ usage) -%}
        {%- endif -%}
        {%- if 'source' in entry -%}
            {%- if entry.source is string or entry.source is not iterable or entry.source | length != 2 -%}
                {%- do exceptions.raise_compiler_error(where ~ ".source must be [source_name, table_name]; got " ~ (entry.source | tojson)[:80]) -%}
            {%- endif -%}
            {%- set relation = source(entry.source[0], entry.source[1]) -%}
        {%- else -%}
            {%- set relation = ref(entry.ref) -%}
        {%- endif -%}
        {%- do feeds.append({'relation': relation,
            'subject_id': gdpr_lakehouse._adopter_identifier(entry.subject_id, where ~ '.subject_id'),
            'subject_type': gdpr_lakehouse._adopter_identifier(entry.subject_type, where ~ '.subject_type'),
            'batch_only': false}) -%}
    {%- endfor -%}
    {%- if not feeds -%}
        {%- do exceptions.raise_compiler_error("the subject key vault has no subjects to key: set var gdpr_lakehouse_subjects"
            ~ usage ~ " (or leave var gdpr_lakehouse_demo on for the demo's landing zone)") -%}
    {%- endif -%}
    {{ return(feeds) }}
{%- endmacro %}
