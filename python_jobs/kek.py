"""This machine's key-encryption key (KEK): made once, kept outside the lakehouse.

    python -m python_jobs.kek init     # make it if missing, have the venv read it (make setup)
    python -m python_jobs.kek path     # where it is

A lakehouse wraps every data key and the tombstone key with the KEK (var
``key_envelope``, on by default), so a reader of every table and every version, holding
the source systems' ids, cannot hash them to records or map a pseudonym back to a
person. The KEK therefore cannot live in the lakehouse: ``init`` writes 32 random bytes,
in hex, to ``~/.config/gdpr_lakehouse/kek`` (``$XDG_CONFIG_HOME``, or the path in
``$LAKEHOUSE_KEK_FILE``), readable by its owner only, and never replaces one that
exists. It also puts ``gdpr_lakehouse_kek.pth`` in the venv, so every process of the
venv (dbt, the jobs, the warm engine) reads the file into LAKEHOUSE_KEK when that is not
set (:mod:`python_jobs.kek_hook`). Back the file up: without it the keys, and so every
encrypted value, cannot be read. On a cluster every worker needs LAKEHOUSE_KEK; on
Databricks the KEK is a secret in a secret scope instead (docs/guides/deploy.md).
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import sysconfig
from pathlib import Path

from python_jobs.kek_hook import (
    ENV,
    FILE_ENV,
    foreign_owner,
    kek_file,
    open_mode,
    parse_key,
    read_key,
)
from python_jobs.project import prog

PTH_NAME = "gdpr_lakehouse_kek.pth"
# exec'd by site at every start of the venv's Python: a checkout moved or rolled back
# to before the hook must not print a traceback each time
PTH_LINE = 'import sys; exec("try:\\n import python_jobs.kek_hook\\nexcept ImportError:\\n pass")\n'


class KekError(Exception):
    pass


def ensure_key_file(path: Path) -> bool:
    """Make the key file when there is none; True when it was made. An existing file
    that holds no key is an error, never overwritten: it may be the only copy."""
    if path.exists():
        if parse_key(path) is None:
            raise KekError(
                f"{path} exists but holds no key-encryption key (64 hex characters); "
                "it was left as it is. Restore it from its backup, or move it away to make a new one"
            )
        mode = open_mode(path)
        if mode is not None:
            raise KekError(
                f"{path} is open to other users of this machine (mode {mode:o}), so it is not "
                f"used: make it readable by its owner only (chmod 600 {path}). Whoever could "
                "read it may hold the key"
            )
        owner = foreign_owner(path)
        if owner is not None:
            raise KekError(
                f"{path} is owned by another user (uid {owner}), so it is not used: whoever "
                "owns it chose the key, and could unwrap every key it wraps. Move it away to "
                "make a new one, or restore your own copy from its backup"
            )
        return False
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use that one
        if read_key(path) is None:
            raise KekError(f"{path} is being written by another process; run again") from None
        return False
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(secrets.token_hex(32) + "\n")
    return True


def pth_path() -> Path | None:
    """Where the venv's .pth goes; None outside a virtual environment."""
    if sys.prefix == sys.base_prefix:
        return None
    return Path(sysconfig.get_paths()["purelib"]) / PTH_NAME


def install_pth(path: Path) -> bool:
    if path.exists() and path.read_text() == PTH_LINE:
        return False
    path.write_text(PTH_LINE)
    return True


def init() -> list[str]:
    path = kek_file()
    if path is None:
        raise KekError(f"{FILE_ENV} is set empty (no key file); export {ENV} instead")
    made = ensure_key_file(path)
    lines = [
        f"key-encryption key: {path} ({'made now' if made else 'kept'}; back it up: "
        "without it the lakehouse's keys cannot be unwrapped)"
    ]
    pth = pth_path()
    if pth is None:
        lines.append(f"not in a venv: export {ENV}=$(cat {path}) before dbt and the jobs")
    else:
        install_pth(pth)
        lines.append(f"this venv's processes read it when {ENV} is not set ({pth.name})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.kek"),
        description="This machine's key-encryption key, kept outside the lakehouse.",
    )
    parser.add_argument("command", choices=["init", "path"])
    args = parser.parse_args(argv)
    try:
        if args.command == "path":
            path = kek_file()
            print(path if path is not None else f"(none: {FILE_ENV} is empty)")
            return 0
        for line in init():
            print(line)
    except (KekError, OSError) as exc:
        print(f"kek: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
