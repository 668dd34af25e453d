"""The parse cache: keyed by the file's bytes, so it can only ever serve what the file says."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cassettes.files import cache_folder, cassette_from_text, load_cassette
from tests.cassettes.test_cassette import GOOD


def test_a_second_load_comes_from_the_cache_and_is_equal(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(GOOD)
    first = load_cassette(path)
    folder = cache_folder()
    assert folder is not None and len(list(folder.rglob("*.json"))) >= 1
    assert load_cassette(path) == first


def test_an_edited_file_is_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(GOOD)
    load_cassette(path)
    path.write_text(GOOD.replace("id: msg_1", "id: msg_2"))
    assert load_cassette(path).interactions[1].response.json == {"id": "msg_2"}


def test_a_corrupt_cache_entry_is_ignored(tmp_path: Path) -> None:
    load_cassette_text = GOOD.replace("model: claude-x}", "model: claude-y}")
    cassette_from_text("c.yaml", load_cassette_text)
    folder = cache_folder()
    assert folder is not None
    for entry in folder.rglob("*.json"):
        entry.write_text("{not json")
    assert cassette_from_text("c.yaml", load_cassette_text).interactions[0].request.body == {
        "model": "claude-y"
    }


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CASSETTE_CACHE", "off")
    assert cache_folder() is None
    assert len(cassette_from_text("d.yaml", GOOD).interactions) == 2


def test_yaml_only_values_are_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A document JSON cannot hold exactly (here a date) is parsed each time, never mangled."""
    monkeypatch.setenv("HARNESS_CASSETTE_CACHE", str(tmp_path / "cache"))
    from harness.cassettes.files import parse_yaml

    assert parse_yaml("e.yaml", "when: 2026-11-30\n")["when"].year == 2026
    assert not (tmp_path / "cache").exists()


# A fake key of a real provider's shape (never a real one), as a refused re-record would hold.
FAKE_KEY = "sk-ant-api03-" + "Zx9" * 12


@pytest.mark.parametrize(
    "where",
    [
        ("model: claude-x}", f"model: claude-x, note: {FAKE_KEY}}}"),
        ("interactions:", f"# pasted by mistake: {FAKE_KEY}\ninteractions:"),
    ],
    ids=["in a body", "in a comment"],
)
def test_a_text_holding_a_key_is_never_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: tuple[str, str]
) -> None:
    """Nothing is cached before it is safe: a re-record the secret scan refuses has already
    been parsed once (to compare it with the old file), and that parse must leave no copy."""
    monkeypatch.setenv("HARNESS_CASSETTE_CACHE", str(tmp_path / "cache"))
    text = GOOD.replace(*where, 1)
    assert text != GOOD
    cassette_from_text("k.yaml", text)
    cassette_from_text("k.yaml", text)
    assert not (tmp_path / "cache").exists()
    cassette_from_text("ok.yaml", GOOD)  # the same cassette without the key is cached
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 1


def test_a_refused_document_is_never_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.errors import CassetteError

    monkeypatch.setenv("HARNESS_CASSETTE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(CassetteError, match="nested deeper than 100 levels"):
        cassette_from_text("deep.yaml", "interactions: " + "[" * 200 + "]" * 200)
    assert not (tmp_path / "cache").exists()
