"""`harness init [DIR]`: scaffold a project that tests its own loop, then say what to run."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass
from pathlib import Path

from harness import __version__
from harness.errors import HarnessError
from harness.scaffold import FOLDER as TEMPLATES

DESCRIPTION = """\
Scaffold a project that tests its own agent loop with the harness:

  pyproject.toml                    a [tool.harness] block (appended to an existing file)
  agent.py                          a small loop on the contract, for all three providers:
                                    replace its body with a call into your agent
  scenarios/one_tool_then_answer.yaml, scenarios/limit_reached_pending_write.yaml
                                    two starter scenarios (a tool then an answer; the round
                                    budget running out with a write pending)
  .github/workflows/harness.yml     CI: replay the committed cassettes with --strict, upload
                                    the report

No file is overwritten: if one exists (or pyproject.toml already has [tool.harness]), nothing
is written and the command says which. Then it prints the next three commands: record your
loop's cassettes from the local emulator, replay them as CI does, commit.

examples:
  harness init
  harness init my_project

Exit codes: 0 written, 2 a file already there (or any other input error).
"""

WORKFLOW = Path(".github/workflows/harness.yml")
VERSION_TOKEN = "$HARNESS_VERSION"
STARTERS = ("limit_reached_pending_write.yaml", "one_tool_then_answer.yaml")


@dataclass(frozen=True, kw_only=True)
class Planned:
    path: Path  # relative to the project folder
    text: str
    append: bool = False  # add to the end of an existing file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder",
        nargs="?",
        default=".",
        metavar="DIR",
        help="the project folder (default: the current one; created if missing)",
    )


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if folder.exists() and not folder.is_dir():
        raise HarnessError(f"{folder}: not a folder; give the project folder to scaffold")
    planned = plan(folder)
    for item in planned:
        write(folder, item)
        print(f"{'appended to' if item.append else 'wrote'} {folder / item.path}")
    print(next_steps(folder))
    return 0


def plan(folder: Path) -> list[Planned]:
    """What to write; `HarnessError` naming every file that is already there."""
    planned = [
        settings_plan(folder),
        Planned(path=Path("agent.py"), text=template("agent.py")),
        *(
            Planned(path=Path("scenarios") / name, text=template(f"scenarios/{name}"))
            for name in STARTERS
        ),
        Planned(path=WORKFLOW, text=template("harness.yml").replace(VERSION_TOKEN, __version__)),
    ]
    taken = [str(folder / p.path) for p in planned if not p.append and (folder / p.path).exists()]
    if taken:
        raise HarnessError(
            f"{', '.join(taken)} already exist(s); nothing was written. Move them aside, or "
            "scaffold into another folder (harness init DIR)"
        )
    return planned


def settings_plan(folder: Path) -> Planned:
    # Imported here: harness.settings needs harness.scenario imported first (the CLI imports
    # every command module to build its parser).
    from harness.settings import SettingsError, read_table, table_in

    block = template("settings.toml")
    path = folder / "pyproject.toml"
    if not path.exists():
        return Planned(path=Path("pyproject.toml"), text=block)
    if read_table(path) is not None:
        raise HarnessError(
            f"{path} already has [tool.harness]; nothing was written. Compare it with the "
            "README's Settings section, or scaffold into another folder (harness init DIR)"
        )
    text = path.read_text(encoding="utf-8")
    separator = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
    try:  # e.g. an inline `tool = {...}` table cannot take a [tool.harness] section
        joined = table_in(text + separator + block, path) is not None
    except SettingsError:
        joined = False
    if not joined:
        raise HarnessError(
            f"{path}: a [tool.harness] block appended to it would not be read; nothing was "
            "written. Add the block by hand (README, Settings)"
        )
    return Planned(path=Path("pyproject.toml"), text=separator + block, append=True)


def template(name: str) -> str:
    try:
        return (TEMPLATES / name).read_text(encoding="utf-8")
    except OSError:
        # Shipped as package data (pyproject.toml [tool.setuptools.package-data]).
        raise HarnessError(
            f"this installation of harness lacks its scaffold file {name} ({TEMPLATES}); "
            "reinstall harness"
        ) from None


def write(folder: Path, item: Planned) -> None:
    target = folder / item.path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a" if item.append else "x", encoding="utf-8") as handle:
            handle.write(item.text)
    except OSError as exc:
        raise HarnessError(f"{target}: cannot write it: {exc.strerror or exc}") from None


def next_steps(folder: Path) -> str:
    go = "" if folder.resolve() == Path.cwd().resolve() else f"cd {shlex.quote(str(folder))}\n  "
    return (
        "\nNext:\n"
        f"  {go}harness record --source scripted   # your loop's cassettes, from the local "
        "emulator (offline; --source live records the real APIs)\n"
        "  harness run --strict               # replay them as CI will: exit 0 when every "
        "cell conforms\n"
        "  git add pyproject.toml agent.py scenarios cassettes .github && git commit -m "
        '"harness: baseline cassettes"\n'
        "Then make agent.py call your own agent (or point `loop` in [tool.harness] at it), "
        "record again, and commit the cassettes."
    )
