"""Unit layer: render the project's macros and assert their SQL.

Rendered in plain Jinja (tests/jinja_harness.py: the context `dbt compile --inline`
gives, no dbt, no warehouse connection, no JVM).
"""

from __future__ import annotations

import json

import pytest

from tests.jinja_harness import Jinja

TAG_PREFIX = "set spark.databricks.delta.commitInfo.userMetadata = "


def test_set_commit_metadata_renders_a_json_tag(jinja: Jinja) -> None:
    sql = jinja.compile_inline(
        "{{ gdpr_lakehouse.set_commit_metadata('erasure', request_id='R-0001', reason='art 17') }}"
    )
    assert sql.startswith(TAG_PREFIX)
    tag = json.loads(sql.removeprefix(TAG_PREFIX))
    assert tag["purpose"] == "erasure"
    assert tag["request_id"] == "R-0001"
    assert tag["reason"] == "art 17"
    assert tag["tool"] == "dbt"
    assert tag["actor"] == "pytest"
    assert tag["command"] == "compile"
    assert len(tag["invocation_id"]) == 36
    # Spark's SET takes the value up to the first ';': a tag must never contain one.
    assert ";" not in sql


@pytest.mark.parametrize(
    "call",
    [
        "set_commit_metadata('x; drop table silver.patients')",
        "set_commit_metadata('build', request_id='R1\\nreset all')",
        "set_commit_metadata('build', reason='${spark.secret}')",
        "set_commit_metadata('build', reason='ok; reset all')",
        "set_commit_metadata('')",
    ],
)
def test_set_commit_metadata_rejects_unsafe_values(jinja: Jinja, call: str) -> None:
    success, message = jinja.compile_errors("{{ gdpr_lakehouse." + call + " }}")
    assert not success
    assert "is not allowed in a commit tag" in message
    # says what is allowed: the safe set, or for free text (reason) what is not
    assert "letters, digits, space" in message or "without control characters" in message


def test_reset_commit_metadata(jinja: Jinja) -> None:
    sql = jinja.compile_inline("{{ gdpr_lakehouse.reset_commit_metadata() }}")
    assert sql == "reset spark.databricks.delta.commitInfo.userMetadata"


def test_history_metric_reads_both_map_renderings(jinja: Jinja) -> None:
    python_style = "{'numFiles': '1', 'numOutputRows': '42'}"
    json_style = '{"numTargetRowsInserted":"7","numTargetRowsUpdated":"3"}'
    sql = jinja.compile_inline(
        '{{ gdpr_lakehouse._history_metric("' + python_style + "\", 'numOutputRows') }}|"
        "{{ gdpr_lakehouse._history_metric('" + json_style + "', 'numTargetRowsUpdated') }}|"
        "{{ gdpr_lakehouse._history_metric('" + json_style + "', 'numTargetRowsDeleted') }}"
    )
    assert sql == "42|3|0"


def test_key_envelope_reads_the_kek_inside_spark_only(
    jinja: Jinja, monkeypatch: pytest.MonkeyPatch
) -> None:
    kek = "ab" * 32
    monkeypatch.setenv("LAKEHOUSE_KEK", kek)
    plain = jinja.with_vars("{key_envelope: false}")
    used = (
        "{{ gdpr_lakehouse.wrap_key('k', gdpr_lakehouse.key_binding('p')) }} | "
        "{{ gdpr_lakehouse.encrypt_pii('v', 'k', 'p', 'email_enc') }} | "
        "{{ gdpr_lakehouse.decrypt_pii('c', 'k', 'p', 'email_enc') }} | "
        "{{ gdpr_lakehouse.keyed_hash('k', 'b', gdpr_lakehouse.key_binding(system_key='tombstone')) }}"
    )
    subject = "encode(concat('subject/', p), 'utf-8')"
    bound = "encode(concat(p, '/email_enc'), 'utf-8')"
    # a lakehouse made with the envelope off: Spark's own functions, the key as stored,
    # the value bound to its subject and column (additional authenticated data)
    assert plain.compile_inline(used).split(" | ") == [
        "k",
        f"aes_encrypt(encode(cast(v as string), 'utf-8'), k, 'GCM', 'DEFAULT', x'', {bound})",
        f"cast(try_aes_decrypt(c, k, 'GCM', 'DEFAULT', {bound}) as string)",
        "sha2(concat(k, b), 256)",
    ]
    enveloped = jinja  # on by default
    # the project's SQL extension reads the key inside the JVM and opens a stored key
    # only to use it, with its binding: SQL names the variable, and no macro renders an
    # unwrapped key
    sql = enveloped.compile_inline(used)
    assert sql.split(" | ") == [
        f"gdpr_wrap_key(k, {subject}, 'LAKEHOUSE_KEK')",
        f"gdpr_encrypt(encode(cast(v as string), 'utf-8'), k, {subject}, {bound}, 'LAKEHOUSE_KEK')",
        f"cast(gdpr_decrypt(c, k, {subject}, {bound}, 'LAKEHOUSE_KEK') as string)",
        "gdpr_keyed_hash(k, encode('system/tombstone', 'utf-8'), b, 'LAKEHOUSE_KEK')",
    ]
    assert kek not in sql and "${" not in sql and "java_method" not in sql
    # a view that consumers query: NULL where their process holds no KEK
    sql = enveloped.compile_inline(
        "{{ gdpr_lakehouse.decrypt_pii('c', 'k', 'p', 'email_enc', required=false) }}"
    )
    assert sql == f"cast(gdpr_try_decrypt(c, k, {subject}, {bound}, 'LAKEHOUSE_KEK') as string)"
    # the key-encryption key's check: whether it opens a stored key, never the key
    assert enveloped.compile_inline("{{ gdpr_lakehouse._key_opens('k', 'b') }}") == (
        "gdpr_key_opens(k, b, 'LAKEHOUSE_KEK')"
    )
    # a binding is never left out: a column that is not a name is refused
    for call in (
        "{{ gdpr_lakehouse.encrypt_pii('v', 'k', 'p', none) }}",
        "{{ gdpr_lakehouse.decrypt_pii('c', 'k', 'p', \"x') or ('\") }}",
    ):
        success, output = enveloped.compile_errors(call)
        assert not success and "must be the name of the column" in output, output
    success, output = enveloped.compile_errors("{{ gdpr_lakehouse.key_binding() }}")
    assert not success and "one of them" in output


def test_key_envelope_without_a_kek_is_a_clear_error(
    jinja: Jinja, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKEHOUSE_KEK", "too-short")
    success, output = jinja.with_vars("{key_envelope: true}").compile_errors(
        "{{ gdpr_lakehouse.wrap_key('k', 'b') }}"
    )
    assert not success
    assert "LAKEHOUSE_KEK is not a 256-bit key in hex" in output
    assert "too-short" not in output


def test_new_data_key_draws_three_distinct_ivs(jinja: Jinja) -> None:
    sql = jinja.compile_inline("{{ gdpr_lakehouse.new_data_key('subject_id') }}")
    assert sql.count("aes_encrypt(") == 3
    for part in range(3):
        assert f"concat(subject_id, ':{part}')" in sql
    assert "rand(" not in sql and "uuid(" not in sql


def test_retention_intervals_are_read_as_hours(jinja: Jinja) -> None:
    rendered = jinja.compile_inline(
        "{{ [gdpr_lakehouse._retention_hours('interval 7 days'), "
        "gdpr_lakehouse._retention_hours('1 hours'), gdpr_lakehouse._retention_hours('interval 2 weeks'), "
        "gdpr_lakehouse._retention_hours('forever'), gdpr_lakehouse._retention_hours(none)] | tojson }}"
    )
    assert json.loads(rendered) == [168, 1, 336, None, None]


def test_rows_changed_reads_the_declared_metric_of_each_operation() -> None:
    """table_history's rows column, from _row_metrics (a dict whose keys include
    `update`: read as items, never as attributes, or Jinja finds dict.update)."""
    from python_jobs.macros import Macros

    macros = Macros()

    def changed(operation: str, **metrics: int) -> str:
        return str(macros._rows_changed({"operation": operation, "metrics": metrics}))

    merge = {"numTargetRowsInserted": 3, "numTargetRowsUpdated": 2, "numTargetRowsDeleted": 1}
    assert changed("MERGE", **merge) == "+3 ~2 -1"
    assert changed("DELETE", numDeletedRows=4) == "-4"
    assert changed("UPDATE", numUpdatedRows=5) == "~5"
    assert changed("WRITE", numOutputRows=6) == "6"
    assert changed("RESTORE", numRestoredFiles=1, numRemovedFiles=2) == "files +1 -2"


def test_compiled_macros_are_kept_on_disk_and_compiled_again_when_they_change(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job's start reads the compiled macro files another process wrote; an edited
    source, or an entry that is not one, is compiled again (never a stale macro)."""
    from python_jobs import macros

    monkeypatch.setenv("GDPR_LAKEHOUSE_JINJA_CACHE", str(tmp_path / "cache"))
    source = "{% macro greet(name) %}hello {{ name }}{% endmacro %}"
    compiled = []
    real = macros.jinja2.Environment.compile

    def counting(self, *args, **kwargs):
        compiled.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(macros.jinja2.Environment, "compile", counting)

    def render(text: str) -> str:
        macros._compiled.cache_clear()  # as a new process would start
        code = macros._compiled(text, "/project/macros/greet.sql")
        env = macros.jinja2.Environment()
        template = env.template_class.from_code(env, code, env.make_globals(None))
        context = template.new_context()
        list(template.root_render_func(context))
        return str(context.vars["greet"]("you"))

    assert render(source) == "hello you"
    assert render(source) == "hello you"
    assert compiled == [source]  # the second "process" read it from disk
    edited = source.replace("hello", "goodbye")
    assert render(edited) == "goodbye you"
    assert compiled == [source, edited]
    entries = list((tmp_path / "cache").iterdir())
    assert len(entries) == 1  # one entry per macro file, rewritten
    entries[0].write_bytes(entries[0].read_bytes()[:40] + b"not marshal data")
    assert render(edited) == "goodbye you"
    assert compiled == [source, edited, edited]
    macros._compiled.cache_clear()


def _planted(macros, source: str, filename: str, payload: str) -> bytes:
    """A cache entry for `source` (the right stamp) whose code is another macro's."""
    import hashlib
    import marshal
    import sys

    stamp = hashlib.sha256(
        "\0".join((macros.jinja2.__version__, sys.version, filename, source)).encode()
    ).digest()
    code = macros.jinja2.Environment(extensions=macros._EXTENSIONS).compile(
        payload, filename=filename
    )
    return stamp + marshal.dumps(code)


@pytest.mark.parametrize(
    "how", ["world-writable entry", "group-writable folder", "other owner", "symbolic link"]
)
def test_a_compiled_macro_another_user_could_have_written_is_never_loaded(
    tmp_path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Attack: a cache entry is code the jobs run, with the key-encryption key in their
    environment. Plant an entry with the right stamp and other code where another user
    could write it (GDPR_LAKEHOUSE_JINJA_CACHE or XDG_CACHE_HOME pointed at a shared
    folder). Guarantee: only an entry the user alone can write, in a folder only the
    user can write, is loaded; anything else is compiled from the source again."""
    import os

    from python_jobs import macros

    if how == "other owner" and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root (CI runs as root)")
    folder = tmp_path / "cache"
    monkeypatch.setenv("GDPR_LAKEHOUSE_JINJA_CACHE", str(folder))
    filename = "/project/macros/greet.sql"
    source = "{% macro greet(name) %}hello {{ name }}{% endmacro %}"
    macros._compiled.cache_clear()
    macros._compiled(source, filename)  # the user's own process writes the entry
    (entry,) = folder.iterdir()
    assert folder.stat().st_mode & 0o077 == 0, oct(folder.stat().st_mode)
    assert entry.stat().st_mode & 0o077 == 0, oct(entry.stat().st_mode)
    planted = _planted(macros, source, filename, source.replace("hello", "pwned"))
    if how == "symbolic link":  # to a private file elsewhere: the link is not followed
        elsewhere = tmp_path / "elsewhere.code"
        elsewhere.write_bytes(planted)
        elsewhere.chmod(0o600)
        entry.unlink()
        entry.symlink_to(elsewhere)
    else:
        entry.write_bytes(planted)
    if how == "world-writable entry":
        entry.chmod(0o666)
    elif how == "group-writable folder":
        folder.chmod(0o770)
    elif how == "other owner":
        os.chown(entry, 65534, 65534)

    def render() -> str:
        macros._compiled.cache_clear()  # as a new process would start
        code = macros._compiled(source, filename)
        env = macros.jinja2.Environment()
        template = env.template_class.from_code(env, code, env.make_globals(None))
        context = template.new_context()
        list(template.root_render_func(context))
        return str(context.vars["greet"]("you"))

    assert render() == "hello you"
    macros._compiled.cache_clear()
