{#- A Spark SQL script that reads one value into a local variable, then runs one
    statement that names it `<label>.<name>`. Delta refuses a subquery in DELETE and
    UPDATE (DELTA_UNSUPPORTED_SUBQUERY); a variable is a value, so the statement keeps
    a plain condition and scans its target once, where a MERGE with the same source
    joins it twice. The statement names the variable through its block's label, so no
    column of its table can stand for it; a script's outermost block takes no label,
    hence two blocks. A variable's values never reach the SQL text, and Delta's
    commit shows an array or map in its operationParameters as an object reference
    (tests/functional/test_erasure.py reads the log for a pseudonym). The script runs
    inside run_with_conflict_retry's loop as well as alone. The value and the statement
    are placed as they are, not re-indented: re-indenting would change a string literal
    that spans lines. -#}
{% macro _with_variable_sql(label, name, type, value_sql, statement) -%}
    {%- if not modules.re.match('^[a-z][a-z0-9_]{0,63}$', label ~ '') or not modules.re.match('^[a-z][a-z0-9_]{0,63}$', name ~ '') -%}
        {%- do exceptions.raise_compiler_error('_with_variable_sql: label and name are lower-case identifiers, got ' ~ (label ~ '')[:40] ~ ', ' ~ (name ~ '')[:40]) -%}
    {%- endif -%}
begin
    {{ label }}: begin
        declare {{ name }} {{ type }};
        set {{ label }}.{{ name }} = (
{{ value_sql | trim }}
        );
{{ statement | trim | trim(';') }};
    end;
end
{%- endmacro %}
