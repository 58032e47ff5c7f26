"""Hadoop's local file system without a process per file (jvm/src, profiles.yml
fs.file.impl), on the session the project builds.

Without Hadoop's native library, Hadoop's RawLocalFileSystem runs `chmod` for every
file it creates and `readlink` for every file status a rename asks for. The project's
classes do both through java.nio. These tests hold the session to them, show the
answers are Hadoop's (permissions, a rename that will not overwrite, a symbolic link,
a missing file), and count the processes the JVM starts with Java Flight Recorder's
jdk.ProcessStart event: none for a Delta table's create, insert and MERGE, where
Hadoop's own class starts one for a single permission.
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

pytestmark = pytest.mark.functional

SCHEMA = "local_fs_check"


def _processes(spark: SparkSession, tmp_path: Path, action: Callable[[], None]) -> list[str]:
    """The commands the JVM started while `action` ran (Flight Recorder, in the JVM)."""
    jvm = spark._jvm
    recording = jvm.jdk.jfr.Recording()
    recording.enable("jdk.ProcessStart")
    recording.start()
    try:
        action()
    finally:
        recording.stop()
    dump = jvm.java.nio.file.Paths.get(
        jvm.java.net.URI(f"file://{tmp_path}/{uuid.uuid4().hex}.jfr")
    )
    recording.dump(dump)
    recording.close()
    events = jvm.jdk.jfr.consumer.RecordingFile.readAllEvents(dump)
    return [str(event.getString("command")) for event in events]


def _hadoop(spark: SparkSession):
    jvm = spark._jvm
    return jvm, spark._jsc.hadoopConfiguration()


def test_the_session_uses_the_project_local_file_system(spark: SparkSession) -> None:
    jvm, conf = _hadoop(spark)
    fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI("file:///"), conf)
    assert fs.getClass().getName() == "gdpr_lakehouse.hadoop.NioLocalFileSystem"
    assert (
        fs.getRawFileSystem().getClass().getName() == "gdpr_lakehouse.hadoop.NioRawLocalFileSystem"
    )
    context = jvm.org.apache.hadoop.fs.FileContext.getLocalFSFileContext(conf)
    assert context.getDefaultFileSystem().getClass().getName() == "gdpr_lakehouse.hadoop.NioLocalFs"


def test_permissions_renames_and_links_are_hadoops(spark: SparkSession, tmp_path: Path) -> None:
    jvm, conf = _hadoop(spark)
    hadoop = jvm.org.apache.hadoop.fs
    fs = hadoop.FileSystem.get(jvm.java.net.URI("file:///"), conf)
    permission = jvm.org.apache.hadoop.fs.permission.FsPermission

    # created with the default mode less the session's umask (0666 & ~077: the local
    # target's fs.permissions.umask-mode), a checksum beside it
    path = hadoop.Path(f"file://{tmp_path}/data.bin")
    out = fs.create(path)
    out.write(bytearray(b"abc"))
    out.close()
    assert stat.S_IMODE(os.stat(tmp_path / "data.bin").st_mode) == 0o600
    assert (tmp_path / ".data.bin.crc").is_file()
    for mode in (0o600, 0o755, 0o000, 0o777):
        fs.setPermission(path, permission(mode))
        assert stat.S_IMODE(os.stat(tmp_path / "data.bin").st_mode) == mode
        assert fs.getFileStatus(path).getPermission().toShort() == mode
    # a mode beyond rwxrwxrwx (the sticky bit) is still set, by Hadoop's own chmod
    folder = hadoop.Path(f"file://{tmp_path}/sticky")
    fs.mkdirs(folder)
    fs.setPermission(folder, permission(0o1777))
    assert stat.S_IMODE(os.stat(tmp_path / "sticky").st_mode) == 0o1777

    # FileContext, as Delta's log store commits: rename without overwrite
    context = hadoop.FileContext.getLocalFSFileContext(conf)
    target = hadoop.Path(f"file://{tmp_path}/renamed.bin")
    rename_options = spark.sparkContext._gateway.new_array(
        jvm.org.apache.hadoop.fs.Options.Rename, 1
    )
    rename_options[0] = jvm.org.apache.hadoop.fs.Options.Rename.NONE
    context.rename(path, target, rename_options)
    assert (tmp_path / "renamed.bin").read_bytes() == b"abc"
    assert not (tmp_path / "data.bin").exists()
    (tmp_path / "other.bin").write_bytes(b"x")
    with pytest.raises(Exception, match="FileAlreadyExistsException"):
        context.rename(hadoop.Path(f"file://{tmp_path}/other.bin"), target, rename_options)
    assert (tmp_path / "renamed.bin").read_bytes() == b"abc"

    # a symbolic link gets Hadoop's own answer (Hadoop's code answers it); a missing
    # path is still not found
    os.symlink(tmp_path / "renamed.bin", tmp_path / "link.bin")
    own = jvm.org.apache.hadoop.conf.Configuration(conf)
    own.set("fs.AbstractFileSystem.file.impl", "org.apache.hadoop.fs.local.LocalFs")
    hadoops = hadoop.FileContext.getLocalFSFileContext(own)
    assert (
        hadoops.getDefaultFileSystem().getClass().getName() == "org.apache.hadoop.fs.local.LocalFs"
    )
    for name in ("link.bin", "renamed.bin"):
        ours, theirs = (
            c.getFileLinkStatus(hadoop.Path(f"file://{tmp_path}/{name}"))
            for c in (context, hadoops)
        )
        assert (ours.isSymlink(), ours.getLen(), ours.isDirectory(), str(ours.getPath())) == (
            theirs.isSymlink(),
            theirs.getLen(),
            theirs.isDirectory(),
            str(theirs.getPath()),
        )
    with pytest.raises(Exception, match="FileNotFoundException"):
        context.getFileLinkStatus(hadoop.Path(f"file://{tmp_path}/missing.bin"))


def _create_and_merge(spark: SparkSession, table: str, matched: str) -> None:
    """A Delta table with change data and deletion vectors: created, three rows
    inserted, and row 2 merged `when matched then <matched>`."""
    spark.sql(
        f"create table {table} (id int, name string) using delta tblproperties "
        "('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = 'true')"
    )
    spark.sql(f"insert into {table} values (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(
        f"merge into {table} as t using (select 2 as id) as s on t.id = s.id "
        f"when matched then {matched}"
    )


def test_a_delta_write_starts_no_process(spark: SparkSession, tmp_path: Path) -> None:
    jvm, conf = _hadoop(spark)
    spark.sql(f"create schema if not exists {SCHEMA}")
    table = f"{SCHEMA}.writes"
    spark.sql(f"drop table if exists {table}")

    started = _processes(spark, tmp_path, lambda: _create_and_merge(spark, table, "delete"))
    assert spark.table(table).count() == 2
    assert [c for c in started if c.split()[:1] in (["chmod"], ["readlink"])] == []

    # the same recording sees Hadoop's own class start one for a single permission
    raw = jvm.org.apache.hadoop.fs.RawLocalFileSystem()
    raw.initialize(jvm.java.net.URI("file:///"), conf)
    (tmp_path / "plain.bin").write_bytes(b"x")
    plain = jvm.org.apache.hadoop.fs.Path(f"file://{tmp_path}/plain.bin")
    mode = jvm.org.apache.hadoop.fs.permission.FsPermission(0o600)
    started = _processes(spark, tmp_path, lambda: raw.setPermission(plain, mode))
    # (only its own: any other process the JVM starts meanwhile is not this test's)
    assert [c for c in started if c.startswith("chmod ")] == [f"chmod 0600 {tmp_path}/plain.bin"]
    spark.sql(f"drop table if exists {table}")


def _open_to_others(root: Path) -> list[str]:
    """Files and folders under root that a group or other users can read, write or enter."""
    return [
        f"{oct(stat.S_IMODE(path.lstat().st_mode))} {path.relative_to(root)}"
        for path in [root, *root.rglob("*")]
        if not path.is_symlink() and path.lstat().st_mode & 0o077
    ]


def test_what_a_delta_write_makes_only_its_owner_reads(spark: SparkSession) -> None:
    """Attack: another local account reads a table's Parquet, change data, deletion
    vectors or log (health data beside pseudonyms). Hadoop sets every file's mode itself,
    0666 less its own umask (022 by default, whatever the process umask), so a default
    session wrote them readable by everyone. Guarantee: with the local target's
    fs.permissions.umask-mode (077), every file and folder of a Delta table is its
    owner's only, as Spark and Delta write them."""
    spark.sql(f"create schema if not exists {SCHEMA}")
    table = f"{SCHEMA}.private"
    spark.sql(f"drop table if exists {table}")
    try:
        _create_and_merge(spark, table, "update set name = 'z'")
        spark.sql(f"delete from {table} where id = 3")
        location = spark.sql(f"describe detail {table}").first()["location"]
        root = Path(location.removeprefix("file:"))
        kinds = {p.parent.name if p.parent != root else p.suffix for p in root.rglob("*.*")}
        assert {".parquet", "_delta_log", "_change_data"} <= kinds, kinds
        assert list(root.glob("deletion_vector_*.bin")), "no deletion vector was written"
        assert _open_to_others(root) == []
    finally:
        spark.sql(f"drop table if exists {table}")
