"""Replay overhead: the harness replaying the cassette library, against plain vcrpy replaying
the same SDK calls without the harness, and how the time grows with the library's size.

Run:  python benchmarks/replay_overhead.py [--cassettes cassettes] [--copies 1 4] [--repeat 3]
(several minutes with the defaults on 2 cores; `--copies 1 --repeat 1` takes under a minute;
`--only one_tool_then_answer --copies 1 2 --repeat 1` is the seconds-long run CI makes so the
script cannot rot)

What is timed (wall clock, one process, after a warm-up pass; medians of --repeat passes run
interleaved so that machine noise hits every variant alike):
- harness: what `harness run` does per cell, minus printing: load and check every cassette,
  serve them from the replay endpoint on 127.0.0.1 (capture at the endpoint), build the SDK
  clients on the cell's base URL, run the reference loop (its tools included) on the clients
  the harness hands it (in-process to the replay: harness/endpoint/local.py), compare every
  request with its recording (drift), parse the trace and compute the findings.
  "cold": the same with an empty parse cache (a fresh CI machine); "replay only": without the
  trace and findings; "over loopback HTTP": every request through the endpoint's socket, as a
  loop on clients of its own sends them.
- vcrpy: plain vcrpy 9 with its own YAML serializer, on stock-format copies of the same cassettes
  (bodies as strings), sending per interaction the SDK call the loop made, with the recorded
  request body (streams read to the end): no loop, no tools, no capture, no checks. Two
  baselines: "client per cassette" builds the SDK client in each cassette, as a test does;
  "shared clients" builds one per provider for the whole pass, the bare SDK cost.
- vcrpy+ours: vcrpy reading our cassettes through `harness.cassettes.vcr_serializer`.

The library is copied 4x and 16x (scenario ids suffixed): time per exchange should stay flat
(linear growth). Targets: harness <= 1.5x vcrpy with shared clients; growth linear within 10%
at 4x. Nothing is asserted; the numbers go in the README.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import vcr
import yaml
from vcr.serializers import yamlserializer

from harness.cassettes import vcr_serializer
from harness.cassettes.cassette import Interaction
from harness.cassettes.files import CACHE_VARIABLE, load_cassette
from harness.cassettes.source import CassetteSource
from harness.outcome import cell_findings
from harness.runner import REFERENCE_LOOP, Cell, cells, load_loop, run_cell
from harness.scenario import Scenario, load_scenario

ROOT = Path(__file__).resolve().parent.parent
MATCH_ON = ("method", "scheme", "host", "path", "query")  # requests replay in recorded order


@dataclass(frozen=True, kw_only=True)
class Library:
    scenarios: list[Scenario]
    cells: list[Cell]
    folder: Path  # our cassettes
    stock: Path  # the same, in stock vcrpy format
    exchanges: int


def copy_library(
    source: Path, scenario_dir: Path, copies: int, work: Path, only: list[str] | None = None
) -> Library:
    """`copies` copies of every scenario (ids suffixed) with their cassettes, both formats."""
    folder, stock = work / "ours", work / "stock"
    scenarios: list[Scenario] = []
    for path in sorted(scenario_dir.glob("*.yaml")):
        if only and path.stem not in only:
            continue
        if any(m.expect.ending == "error" for m in load_scenario(path).messages):
            continue  # the SDKs' retry backoff sleeps by design: time, not overhead
        for n in range(copies):
            new_id = path.stem if n == 0 else f"{path.stem}__copy{n}"
            target = work / "scenarios" / f"{new_id}.yaml"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
            scenarios.append(load_scenario(target))
            for cassette in source.glob(f"*/{path.stem}.yaml"):
                _copy_cassette(cassette, path.stem, new_id, folder, stock, "")
            for cassette in source.glob(f"*/{path.stem}.stream.yaml"):
                _copy_cassette(cassette, path.stem, new_id, folder, stock, ".stream")
    chosen = cells(scenarios)
    exchanges = sum(len(load_cassette(p).interactions) for p in folder.glob("*/*.yaml"))
    return Library(
        scenarios=scenarios, cells=chosen, folder=folder, stock=stock, exchanges=exchanges
    )


def _copy_cassette(
    path: Path, old_id: str, new_id: str, folder: Path, stock: Path, suffix: str
) -> None:
    text = path.read_text().replace(f"  scenario: {old_id}\n", f"  scenario: {new_id}\n", 1)
    for base in (folder, stock):
        (base / path.parent.name).mkdir(parents=True, exist_ok=True)
    (folder / path.parent.name / f"{new_id}{suffix}.yaml").write_text(text)
    as_vcrpy = vcr_serializer.deserialize(text)
    (stock / path.parent.name / f"{new_id}{suffix}.yaml").write_text(
        yamlserializer.serialize(as_vcrpy)
    )


def harness_pass(lib: Library, with_checks: bool = True, in_process: bool = True) -> float:
    loop = load_loop(REFERENCE_LOOP)
    started = time.perf_counter()
    source = CassetteSource(
        [(c.scenario, c.provider, c.stream) for c in lib.cells], lib.folder, in_process
    )
    kept = []
    try:
        for number, cell in enumerate(lib.cells, 1):
            run = run_cell(cell, source, loop, f"bench{number}")
            own = source.findings(cell.scenario, cell.provider, cell.stream)
            findings = cell_findings(run) + own if with_checks else own
            assert not findings, (cell.id, findings)
            kept.append((run, findings))  # `harness run` keeps every result for its report
    finally:
        source.close()
    return time.perf_counter() - started


def vcrpy_pass(folder: Path, serializer: str, shared: bool) -> float:
    my_vcr = vcr.VCR(serializer=serializer, record_mode="none", match_on=MATCH_ON)
    my_vcr.register_serializer("harness", vcr_serializer)
    started = time.perf_counter()
    clients: dict[str, Callable[[Interaction], Any]] = {}
    for path in sorted(folder.glob("*/*.yaml")):
        interactions = _REQUESTS[f"{path.parent.name}/{path.name}"]
        provider = path.parent.name
        with my_vcr.use_cassette(str(path)) as played:
            if not shared or provider not in clients:
                clients[provider] = SDK_CALLS[provider]()
            call = clients[provider]
            for interaction in interactions:
                try:
                    call(interaction)
                except Exception:
                    if interaction.response.status < 400:
                        raise  # a recorded error answer is expected to raise in the SDK
            assert played.all_played, path
    return time.perf_counter() - started


_REQUESTS: dict[str, tuple[Interaction, ...]] = {}


def load_requests(lib: Library) -> None:
    """The recorded requests to send again, read before the library's passes start."""
    _REQUESTS.clear()
    for path in lib.folder.glob("*/*.yaml"):
        _REQUESTS[f"{path.parent.name}/{path.name}"] = load_cassette(path).interactions


def _anthropic() -> Callable[[Interaction], Any]:
    import anthropic

    client = anthropic.Anthropic(api_key="bench-dummy-key", max_retries=0)

    def call(interaction: Interaction) -> Any:
        body = dict(interaction.request.body)
        if body.get("stream"):
            return list(client.messages.create(**body))
        return client.messages.create(**body)

    return call


def _openai() -> Callable[[Interaction], Any]:
    import openai

    client = openai.OpenAI(api_key="bench-dummy-key", max_retries=0)

    def call(interaction: Interaction) -> Any:
        body = dict(interaction.request.body)
        if body.get("stream"):
            return list(client.responses.create(**body))
        return client.responses.create(**body)

    return call


def _gemini() -> Callable[[Interaction], Any]:
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="bench-dummy-key")

    def call(interaction: Interaction) -> Any:
        body = dict(interaction.request.body)
        model = interaction.request.uri.rsplit("/", 1)[1].split(":")[0]
        settings = {k: v for k, v in body.items() if k not in ("contents", "generationConfig")}
        settings.update(body.get("generationConfig") or {})
        config = types.GenerateContentConfig.model_validate(settings)
        if "streamGenerateContent" in interaction.request.uri:
            return list(
                client.models.generate_content_stream(
                    model=model, contents=body["contents"], config=config
                )
            )
        return client.models.generate_content(model=model, contents=body["contents"], config=config)

    return call


SDK_CALLS: dict[str, Callable[[], Callable[[Interaction], Any]]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "gemini": _gemini,
}


def passes_for(lib: Library, full: bool) -> dict[str, Callable[[], float]]:
    passes: dict[str, Callable[[], float]] = {
        "harness": lambda: harness_pass(lib),
        "per cassette": lambda: vcrpy_pass(lib.stock, "yaml", shared=False),
        "shared": lambda: vcrpy_pass(lib.stock, "yaml", shared=True),
    }
    if full:
        passes["cold"] = lambda: cold(lambda: harness_pass(lib))
        passes["replay only"] = lambda: harness_pass(lib, with_checks=False)
        passes["http"] = lambda: harness_pass(lib, in_process=False)
        passes["ours"] = lambda: vcrpy_pass(lib.folder, "harness", shared=True)
    return passes


def measure(libs: dict[int, Library], repeat: int) -> dict[int, dict[str, list[float]]]:
    """Every variant on every library size, interleaved `repeat` times: each pass's time."""
    smallest = min(libs)
    plan = {copies: passes_for(lib, full=copies == smallest) for copies, lib in libs.items()}
    runs: dict[int, dict[str, list[float]]] = {c: {k: [] for k in p} for c, p in plan.items()}
    for _ in range(repeat):
        for copies, passes in plan.items():
            load_requests(libs[copies])
            for name, timed in passes.items():
                runs[copies][name].append(timed())
        print("  pass done", file=sys.stderr, flush=True)
    return runs


def cold(timed: Callable[[], float]) -> float:
    """`timed` with an empty cassette parse cache."""
    with tempfile.TemporaryDirectory() as cache:
        previous = os.environ.get(CACHE_VARIABLE)
        os.environ[CACHE_VARIABLE] = cache
        try:
            return timed()
        finally:
            if previous is None:
                del os.environ[CACHE_VARIABLE]
            else:
                os.environ[CACHE_VARIABLE] = previous


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cassettes", default=str(ROOT / "cassettes"))
    parser.add_argument("--scenarios", default=str(ROOT / "scenarios"))
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", action="append", help="only this scenario id (repeatable)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # SDK deprecation notices about model names
    yaml_c = "libyaml" if getattr(yaml, "__with_libyaml__", False) else "pure-Python YAML"
    print(f"replay overhead: median of {args.repeat} interleaved passes, {yaml_c}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        libs = {
            copies: copy_library(
                Path(args.cassettes),
                Path(args.scenarios),
                copies,
                Path(tmp) / f"x{copies}",
                args.only,
            )
            for copies in sorted(args.copies)
        }
        smallest = min(libs)
        measure({smallest: libs[smallest]}, 1)  # warm-up: imports, first clients, parse cache
        runs = measure(libs, args.repeat)
    times = {c: {k: statistics.median(v) for k, v in r.items()} for c, r in runs.items()}
    print_table({copies: (libs[copies], times[copies]) for copies in libs})
    print_spread(runs[smallest])
    return 0


def print_table(results: dict[int, tuple[Library, dict[str, float]]]) -> None:
    first_copies = min(results)
    first_lib, first = results[first_copies]
    e = first_lib.exchanges
    print(f"\nlibrary {first_copies}x: {len(first_lib.cells)} cells, {e} exchanges")
    print(f"{'variant':<36} {'total s':>8} {'ms/cell':>8} {'ms/exch':>8} {'vs vcrpy':>9}")
    rows = [
        ("harness (warm parse cache)", "harness"),
        ("harness, cold parse cache", "cold"),
        ("harness, replay only (no checks)", "replay only"),
        ("harness, over loopback HTTP", "http"),
        ("vcrpy, client per cassette", "per cassette"),
        ("vcrpy, shared clients", "shared"),
        ("vcrpy + our serializer, shared", "ours"),
    ]
    for label, key in rows:
        t = first[key]
        ratios = f"{t / first['per cassette']:.2f}/{t / first['shared']:.2f}"
        print(
            f"{label:<36} {t:>8.2f} {t / len(first_lib.cells) * 1e3:>8.2f} "
            f"{t / e * 1e3:>8.2f} {ratios:>9}"
        )
    print("(vs vcrpy: ratio to the client-per-cassette / shared-clients baseline)")
    per_exchange = first["harness"] / e
    print(
        f"\n{'library':>7} {'cells':>6} {'exch':>6} {'harness s':>9} {'ms/exch':>8} {'growth':>7} "
        f"{'vs vcrpy':>9}"
    )
    for copies, (lib, times) in results.items():
        h = times["harness"]
        growth = h / lib.exchanges / per_exchange
        ratios = f"{h / times['per cassette']:.2f}/{h / times['shared']:.2f}"
        print(
            f"{copies:>6}x {len(lib.cells):>6} {lib.exchanges:>6} {h:>9.2f} "
            f"{h / lib.exchanges * 1e3:>8.2f} {growth:>7.3f} {ratios:>9}"
        )
    print("(growth: harness time per exchange relative to the smallest library; linear = 1.000)")


def print_spread(runs: dict[str, list[float]]) -> None:
    """How far the passes ranged, and the ratio pass by pass (each harness pass against the
    shared-clients vcrpy pass of the same round): the machine's noise, in the table's terms."""
    harness, shared = runs["harness"], runs["shared"]
    ratios = sorted(h / s for h, s in zip(harness, shared, strict=True))
    print(
        f"\nspread over {len(harness)} passes: harness {min(harness):.2f}-{max(harness):.2f} s, "
        f"vcrpy shared clients {min(shared):.2f}-{max(shared):.2f} s; harness/shared pass by "
        f"pass {ratios[0]:.2f}-{ratios[-1]:.2f} (median {statistics.median(ratios):.2f})"
    )


if __name__ == "__main__":
    sys.exit(main())
