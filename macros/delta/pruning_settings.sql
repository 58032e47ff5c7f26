{#- The settings of erasure by pruning, checked before anything is written (by
    gdpr_erase, and by the build, which cuts a pseudonym key's statistics to them): var
    erasure_pruning_max_prefixes (default 256, chosen by bench/pruning.py; 0 turns pruning off) and var
    erasure_pruning_prefix_chars (default 4, 1 to 16). Returns {max_prefixes, prefix_chars}. -#}
{% macro _pruning_settings() -%}
    {%- set settings = {} -%}
    {%- for name, value, low, high in [
          ('erasure_pruning_max_prefixes', var('erasure_pruning_max_prefixes', 256), 0, 1024),
          ('erasure_pruning_prefix_chars', var('erasure_pruning_prefix_chars', 4), 1, 16)] -%}
        {%- if value is boolean or value is not number or value != (value | int) or value < low or value > high -%}
            {%- do exceptions.raise_compiler_error("var " ~ name ~ " is " ~ (value | string)[:40] ~ "; it must be a whole number from "
                ~ low ~ " to " ~ high ~ (" (0 turns pruning off)" if low == 0 else "") ~ ". Nothing was run") -%}
        {%- endif -%}
        {%- do settings.update({name.replace('erasure_pruning_', ''): value | int}) -%}
    {%- endfor -%}
    {{ return(settings) }}
{%- endmacro %}
