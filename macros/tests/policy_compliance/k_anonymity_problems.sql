{#
    Every version a retained aggregate's history can still be read at (time travel, from
    cdf_readable_from to the newest) publishes no cell of fewer than var k_anonymity
    data subjects. A relation says which column counts them in meta.privacy.k_anonymity
    (gold_encounters_monthly: subject_count). One row per version with such cells:
    (relation_name, version, problem). A version an older model wrote without that
    column is one (the files stay readable until a purge's VACUUM). A relation not
    built yet publishes nothing.
#}
{% macro k_anonymity_problems() -%}
    {{ return(adapter.dispatch('k_anonymity_problems', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__k_anonymity_problems() -%}
    {%- set problems = [] -%}
    {%- if not execute -%}{{ return(problems) }}{%- endif -%}
    {%- set k = gdpr_lakehouse.k_anonymity() -%}
    {%- for node in gdpr_lakehouse.delta_table_nodes() if ((node.config.meta or {}).get('privacy') or {}).get('k_anonymity') -%}
        {%- set column = node.config.meta.privacy.k_anonymity -%}
        {%- set relation = adapter.get_relation(database=none, schema=node.schema, identifier=node.alias) -%}
        {%- if column is not string or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}$', column) -%}
            {%- do problems.append([node.schema ~ '.' ~ node.alias, '', 'meta.privacy.k_anonymity must name the column that counts data subjects; got ' ~ (column | string)[:60]]) -%}
        {%- elif relation is not none -%}
            {%- set history = gdpr_lakehouse.delta_history(relation) -%}
            {%- set first = gdpr_lakehouse.cdf_readable_from(relation) | int -%}
            {%- set below = ' where ' ~ adapter.quote(column) ~ ' is null or ' ~ adapter.quote(column) ~ ' < ' ~ k -%}
            {%- set checks = [] -%}
            {#- the table as it is now, always (its newest version is always readable); then
                every older version still readable. A commit that changes no row (VACUUM,
                properties) shows what the one before it showed. -#}
            {%- set versions = [none] -%}
            {%- for commit in history | sort(attribute='version') if commit.version >= first
                  and commit.operation not in ('VACUUM START', 'VACUUM END', 'SET TBLPROPERTIES', 'UNSET TBLPROPERTIES') -%}
                {%- do versions.append(commit.version) -%}
            {%- endfor -%}
            {%- for version in versions -%}
                {%- set read = relation ~ ((' version as of ' ~ version) if version is not none else '') -%}
                {%- set names = run_query('select * from ' ~ read ~ ' limit 0').columns | map(attribute='name') | map('lower') | list -%}
                {%- if column | lower in names -%}
                    {%- do checks.append("select '" ~ (version if version is not none else 'now') ~ "' as version, count(*) as cells from " ~ read ~ below) -%}
                {%- else -%}
                    {%- do problems.append([relation | string, version if version is not none else 'now', 'written without ' ~ column
                        ~ ' (an older model, not k-anonymous): ' ~ ('python -m python_jobs.purge removes its files once the deleted-file retention has passed'
                        if version is not none else 'dbt run --select ' ~ node.name)]) -%}
                {%- endif -%}
            {%- endfor -%}
            {%- for row in (run_query(checks | join(' union all ')) if checks else []) if row[1] | int > 0 -%}
                {%- do problems.append([relation | string, row[0], row[1] ~ ' cell(s) of fewer than ' ~ k ~ ' data subjects (var k_anonymity)']) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}
