"""docs/reference/, written from what the project itself declares (run by `make docs`).

    python -m lint.reference           # write commands.md, macros.md and vars.md
    python -m lint.reference --check   # exit 1 when a page differs from what it would write

- commands.md: `gdpr-lakehouse --help` and each command's `--help`;
- macros.md: every documented macro of macros/_macros.yml, by the folder it lives in;
- vars.md: the `vars:` block of dbt_project.yml, each var with its default and its line.

tests/unit/test_reference.py fails when a committed page is not what this writes.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "reference"
HEADER = "<!-- written by `python -m lint.reference`; edit the source it names, not this page -->\n"
VAR_LINE = re.compile(r"^  (#\s*)?([a-z_]+):\s*(.*?)\s+#\s*(.*)$")


def _help(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "100", "LAKEHOUSE_ENGINE": "off"}
    done = subprocess.run(
        [sys.executable, "-m", "python_jobs.cli", *args, "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise SystemExit(f"gdpr-lakehouse {' '.join(args)} --help failed:\n{done.stderr}")
    return done.stdout.rstrip() + "\n"


def commands() -> str:
    from python_jobs.cli import COMMANDS

    parts = [
        HEADER,
        "# Commands\n\n",
        "`gdpr-lakehouse <command>` and `python -m python_jobs.<module>` run the same jobs.\n",
        "Source: each job's argparse (`python_jobs/<module>.py`).\n\n",
        "```\n",
        _help(),
        "```\n",
    ]
    for name, (module, what) in COMMANDS.items():
        parts += [f"\n## {name}\n\n{what} (`python -m python_jobs.{module}`)\n\n```\n"]
        parts += [_help(name), "```\n"]
    return "".join(parts)


def _macro_folders() -> dict[str, str]:
    """macro name -> the folder under macros/ that defines it."""
    found = {}
    for path in sorted((ROOT / "macros").rglob("*.sql")):
        for name in re.findall(r"{%-?\s*macro\s+([a-z_0-9]+)\s*\(", path.read_text()):
            found.setdefault(name, str(path.parent.relative_to(ROOT / "macros")))
    return found


def _cell(text: object) -> str:
    return " ".join(str(text or "").split()).replace("|", "\\|")


def macros() -> str:
    declared = yaml.safe_load((ROOT / "macros" / "_macros.yml").read_text())["macros"]
    folders = _macro_folders()
    by_folder: dict[str, list[dict]] = {}
    for macro in declared:
        by_folder.setdefault(folders.get(macro["name"], "?"), []).append(macro)
    parts = [
        HEADER,
        "# Macros\n\n",
        "Every documented macro, by the folder of macros/ it lives in (layers call only\n",
        "downward: utils, naming, delta, landing, privacy, tests). The operations a user\n",
        "runs are `dbt run-operation <name> --args '{...}'`. Source: macros/_macros.yml.\n",
    ]
    for folder in sorted(by_folder):
        parts.append(f"\n## {folder}\n")
        for macro in by_folder[folder]:
            parts.append(f"\n### {macro['name']}\n\n{_cell(macro.get('description'))}\n")
            arguments = macro.get("arguments") or []
            if arguments:
                parts.append("\n| argument | type | meaning |\n|---|---|---|\n")
                for arg in arguments:
                    parts.append(
                        f"| `{arg['name']}` | {_cell(arg.get('type'))} | "
                        f"{_cell(arg.get('description'))} |\n"
                    )
    return "".join(parts)


def vars_page() -> str:
    text = (ROOT / "dbt_project.yml").read_text()
    block = text[text.index("\nvars:\n") + 7 :]
    block = block[: re.search(r"^\S", block, flags=re.M).start()]
    parts = [
        HEADER,
        "# Vars\n\n",
        "Every var the engine reads, declared once with its default in the `vars:` block of\n",
        "dbt_project.yml. Set them under `vars: {gdpr_lakehouse: {...}}` in an adopting\n",
        "project (they win over these, in builds and run-operations alike) or per command\n",
        "with `--vars`. Each is checked where it is read: a bad value stops the command with\n",
        "what is allowed. tests/unit/test_vars.py fails on a var read but not declared,\n",
        "declared but not read, or read with another default.\n",
    ]
    for line in block.splitlines():
        heading = re.match(r"^  # --- (.+?) -+$", line)
        if heading:
            parts.append(f"\n## {heading[1][0].upper()}{heading[1][1:]}\n\n")
            parts.append("| var | default | meaning |\n|---|---|---|\n")
            continue
        var = VAR_LINE.match(line)
        if var:
            unset, name, default, meaning = var.groups()
            shown = default.lstrip("<").rstrip(">") if unset else default
            parts.append(f"| `{name}` | `{_cell(shown)}` | {_cell(meaning)} |\n")
    return "".join(parts)


PAGES = {"commands.md": commands, "macros.md": macros, "vars.md": vars_page}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lint.reference", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    stale = []
    for name, write in PAGES.items():
        path, text = OUT / name, write()
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(name)
        else:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        print(
            f"docs/reference: {', '.join(stale)} out of date; run `python -m lint.reference`",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
