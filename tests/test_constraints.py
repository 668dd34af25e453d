"""constraints.txt pins the SDK and HTTP versions the cassettes were recorded with, each an
exact version inside pyproject.toml's range, and every documented install uses it."""

from __future__ import annotations

import re
import sys
from importlib.metadata import version

import pytest
from packaging.requirements import Requirement

from tests.conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PINNED = ("anthropic", "openai", "google-genai", "httpx2", "vcrpy")


def pin_problems(constraints: str, dependencies: list[str]) -> list[str]:
    """What is wrong with `constraints` (a constraints file's text) for `dependencies`
    (pyproject.toml's): each of PINNED pinned once, with ==, inside its range."""
    ranges = {Requirement(d).name: Requirement(d).specifier for d in dependencies}
    pins: dict[str, str] = {}
    problems: list[str] = []
    for line in constraints.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        exact = re.fullmatch(r"==(\d[\w.]*)", str(requirement.specifier))
        if exact is None:
            problems.append(f"{line}: pin an exact version (NAME==VERSION)")
            continue
        pins[requirement.name] = exact.group(1)
    for name in PINNED:
        if name not in pins:
            problems.append(f"{name}: not pinned")
        elif pins[name] not in ranges[name]:
            problems.append(f"{name}=={pins[name]}: outside pyproject.toml's {ranges[name]}")
    return problems


def _project() -> tuple[str, list[str]]:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return (ROOT / "constraints.txt").read_text(), dependencies


def test_constraints_pin_the_recording_versions_inside_the_ranges() -> None:
    assert pin_problems(*_project()) == []


@pytest.mark.parametrize(
    ("constraints", "problem"),
    [
        ("anthropic>=2.14\n", "anthropic>=2.14: pin an exact version"),
        ("anthropic==1.0.0\n", "anthropic==1.0.0: outside pyproject.toml's"),
        ("# nothing\n", "vcrpy: not pinned"),
    ],
    ids=["a-range", "outside-the-range", "missing"],
)
def test_a_bad_pin_is_named(constraints: str, problem: str) -> None:
    problems = pin_problems(constraints, _project()[1])
    assert any(p.startswith(problem) for p in problems), problems


def test_the_installed_versions_are_the_pinned_ones() -> None:
    """The test venv is installed as documented (`-c constraints.txt`)."""
    constraints, _ = _project()
    pins = dict(re.findall(r"^([\w-]+)==(\S+)", constraints, re.M))
    assert {name: version(name) for name in PINNED} == {name: pins[name] for name in PINNED}


def test_the_readme_commands_and_ci_install_with_the_constraints() -> None:
    head = (ROOT / "README.md").read_text().split("## ")[0]
    blocks = re.findall(r"```sh\n(.*?)```", head, re.S)
    ci = (ROOT / ".ci" / "run").read_text()
    installs = [
        line for text in (*blocks, ci) for line in text.splitlines() if "pip install" in line
    ]
    assert len(installs) == 3
    assert all("pip install -q -c constraints.txt -e " in line for line in installs)
    assert "npm ci --prefix examples/node" in ci
