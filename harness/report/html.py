"""The HTML compatibility report: one self-contained file (inline CSS and script, no network)
rendered from a results file, and optionally a previous one for the "what changed" view.

Every model and tool text goes through jinja2's autoescape: a tool result holding `<script>`
shows as text. Cells keep their transcripts in `<template>` elements, so a 500-cell report
opens quickly and a transcript is laid out only when its cell is opened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from harness.headlines import title_of
from harness.report.changes import compare
from harness.report.controls import visible_controls
from harness.report.view import (
    anchor,
    cell_view,
    provider_totals,
    providers_of,
    raw_json,
    raw_response,
    rule_rows,
    scenario_rows,
)
from harness.results.files import write_text_atomic
from harness.results.model import SCHEMA_VERSION, Results

TEMPLATES = Path(__file__).with_name("templates")
DEFAULT_HTML = Path("reports/index.html")


@dataclass(frozen=True, kw_only=True)
class Summary:
    total: int
    failed: int


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,  # every template, whatever its extension: all text is untrusted
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["compact_json"] = _compact_json
    env.filters["raw_json"] = lambda value: pre_text(raw_json(value))
    env.filters["raw_response"] = raw_response
    env.filters["pre_text"] = pre_text
    env.filters["anchor"] = anchor
    return env


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def pre_text(text: str) -> Markup:
    """Escape text for the content of a <pre> element (never an attribute): `&`, `<` and `>`.

    Raw bodies are most of a report's size and JSON is full of quotes, which autoescape would
    write as `&#34;` (5 bytes each); in element content a quote is inert, so this keeps a
    500-cell report about a quarter smaller. Tested with `<script>` and `</pre>` in bodies."""
    return Markup(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def render_html(results: Results, previous: Results | None = None) -> str:
    providers = providers_of(results)
    order = {rule.id: i for i, rule in enumerate(results.rules)}
    titles = {rule.id: rule.title for rule in results.rules}
    template = _environment().get_template("report.html.j2")
    # The templates hold no control characters: any in the page came from model or tool text.
    return visible_controls(
        template.render(
            run=results.run,
            schema_version=SCHEMA_VERSION,
            summary=Summary(
                total=len(results.cells), failed=sum(c.verdict == "fail" for c in results.cells)
            ),
            providers=providers,
            scenario_rows=scenario_rows(results, providers),
            totals=provider_totals(results, providers),
            rule_rows=rule_rows(results, providers),
            changes=compare(previous, results) if previous is not None else None,
            cells=[cell_view(c, order) for c in results.cells],
            rule_title=lambda rule: title_of(rule, titles),
        )
    )


def write_html(results: Results, path: str | Path, previous: Results | None = None) -> Path:
    return write_text_atomic(path, render_html(results, previous))
