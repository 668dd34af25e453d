"""The HTML report in a real browser (headless Chromium, Debian's `chromium` package, which
`.ci/run` installs): the matrices render, a transcript opens, the script runs without errors,
filters work, and hostile text stays text. Screenshots are taken under the test's tmp_path
(never the repository's reports/)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.report.html import render_html, write_html
from harness.report.view import anchor
from tests.report.hostile_text import BIDI_SHOWN, BIDI_TEXT, CELL, text_results, unsafe
from tests.results.runs import mixed_results, real_results

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on PATH (Debian: apt-get install chromium; .ci/run installs it)",
)


def _chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / "profile"
    argv = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
        url,
    ]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=90, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Uncaught" not in result.stderr, result.stderr[-2000:]  # the script threw
    return result


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    return write_html(mixed_results(), folder / "index.html", previous=real_results())


def _dom(tmp_path: Path, report: Path, fragment: str) -> str:
    return _chromium(tmp_path, f"{report.as_uri()}#{fragment}", "--dump-dom").stdout


def test_matrix_and_a_transcript_render(tmp_path: Path, report: Path) -> None:
    cell = anchor("hostile_markup[openai]")
    dom = _dom(tmp_path, report, f"focus={cell}")
    assert re.search(r'<body[^>]* data-ready-ms="\d+"', dom)  # the script ran to its end
    assert dom.count('<tr data-scenario="') == 3 and '<tr data-rule="L12"' in dom
    opened = dom.split(f'id="{cell}"', 1)[1].split("<template>", 1)[0]
    assert '<div class="body"><div class="transcript">' in opened  # copied out of its template
    for text in ("User message 1", "call 2", "tool result", "final answer", "raw request"):
        assert text in opened, text
    # hostile text shows as text and never ran
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in opened
    assert "<title>harness compatibility report" in dom and "pwned</title>" not in dom
    assert "&lt;img src=x onerror=" in opened and "<img" not in dom


def test_filters_hide_other_providers(tmp_path: Path, report: Path) -> None:
    dom = _dom(tmp_path, report, "q=provider:gemini")
    cells = re.findall(r'<details class="cell [^"]*" id="([^"]+)"([^>]*)>', dom)
    assert len(cells) == 18
    for cell_id, attrs in cells:
        assert ("hidden" in attrs) != cell_id.endswith(("--gemini", "--gemini-stream")), cell_id
    assert '<span id="f-count" aria-live="polite">6 of 18 cells</span>' in dom


def test_screenshots(tmp_path: Path, report: Path) -> None:
    shots = {
        "screenshot.png": "",
        "screenshot-cell.png": f"#focus={anchor('limit_reached_pending_write[openai]')}",
    }
    for name, fragment in shots.items():
        png = tmp_path / name
        _chromium(
            tmp_path,
            report.as_uri() + fragment,
            "--window-size=1280,1500",
            "--hide-scrollbars",
            f"--screenshot={png}",
        )
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


@pytest.mark.parametrize(
    ("fragment", "count"),
    [
        ("%E0%A4%A", "18 of 18 cells"),  # truncated percent-encoding: URIError before
        ("focus=cell-%ZZ", None),
        ("q=%E0%A4%A", "0 of 18 cells"),  # taken as written: a filter that matches nothing
    ],
)
def test_a_malformed_fragment_still_renders(
    tmp_path: Path, report: Path, fragment: str, count: str | None
) -> None:
    dom = _dom(tmp_path, report, fragment)  # `_chromium` fails on an uncaught error
    assert re.search(r'<body[^>]* data-ready-ms="\d+"', dom)  # the script ran to its end
    assert dom.count('<tr data-scenario="') == 3
    if count is not None:
        assert f'<span id="f-count" aria-live="polite">{count}</span>' in dom


# Opens every raw exchange of the shown cell, as a click would: the script then indents the
# bodies, which parses their `\u202e` escapes back into characters.
OPEN_RAW = (
    "<script>document.querySelectorAll('details.raw').forEach(d => { d.open = true; });</script>"
)


def test_a_bidi_override_is_shown_visibly(tmp_path: Path) -> None:
    html = render_html(text_results(BIDI_TEXT)).replace("</body>", OPEN_RAW + "</body>")
    page = tmp_path / "index.html"
    page.write_text(html, encoding="utf-8")
    cell = anchor(CELL)
    url = f"{page.as_uri()}#focus={cell}"
    dom = _chromium(tmp_path, url, "--virtual-time-budget=3000", "--dump-dom").stdout
    assert re.search(r'<body[^>]* data-ready-ms="\d+"', dom)
    assert not unsafe(dom)  # no override anywhere, in the transcript or the indented bodies
    opened = dom.split(f'id="{cell}"', 1)[1].split("<template>", 1)[0]
    assert opened.count(BIDI_SHOWN) >= 3  # answer, tool result, finding
    assert 'class="json indented"' in opened  # the raw request was parsed and indented…
    assert '"note": "invoice\\u202etxt.exe\\u202c' in opened  # …and its escapes kept


def test_a_failing_cell_opens_on_its_headline_with_consequences(
    tmp_path: Path, report: Path
) -> None:
    cell = anchor("limit_reached_pending_write[openai]")
    dom = _dom(tmp_path, report, f"focus={cell}")
    opened = dom.split(f'id="{cell}"', 1)[1].split("<template>", 1)[0]
    summary = opened.split("</summary>", 1)[0]
    assert '<span class="headline-rule">L3 <span class="rule-title">Round budget</span>' in summary
    headlines = opened.split('<section class="headlines">', 1)[1].split("</section>", 1)[0]
    assert "1 headline · " in headlines and 'class="consequences"' in headlines
    assert f'href="#{cell}-call-2"' in headlines and "follows from L3 (round count)" in headlines
    assert 'class="finding consequence"' in opened and 'class="finding headline"' in opened
