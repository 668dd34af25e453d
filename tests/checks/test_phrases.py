"""Reading the closing answer (L14) and the closing order (L13) in Portuguese, English and
Spanish, and tuning per scenario."""

from __future__ import annotations

import pytest

from harness.checks.phrases import (
    CONTINUE_WORDS,
    LIMIT_WORDS,
    ClosingPhrases,
    holds_order,
    normalise,
)
from harness.loop.closing import NOT_EXECUTED_RESULT, STEP_LIMIT_INSTRUCTION

DEFAULT = ClosingPhrases()

# (text, asks to continue, explains the limit)
CLOSINGS = [
    ("I reached the step limit for this answer. Shall I continue?", True, True),
    ("I hit the limit of steps. Let me know if you want me to continue.", True, True),
    ("I've run out of steps for now. Do you want me to go on and save it?", True, True),
    ("I reached the step limit for this answer.", False, True),
    ("Your record is 85 kg. Should I continue?", True, False),
    ("I will continue tomorrow.", False, False),
    ("Atingi o limite de etapas desta resposta. Quer que eu continue?", True, True),
    ("Cheguei ao limite de passos. Posso prosseguir e salvar a meta?", True, True),
    ("Atingi o limite de etapas. Se quiser que eu continue, é só dizer.", True, True),
    ("Llegué al límite de pasos de esta respuesta. ¿Quieres que continúe?", True, True),
    ("Alcancé el LÍMITE de pasos. ¿Sigo con la meta?", True, True),
    ("Alcancé el límite de pasos.", False, True),
    ("Let me fetch your history…", False, False),
]


@pytest.mark.parametrize(("text", "asks", "explains"), CLOSINGS)
def test_asks_and_explains(text: str, asks: bool, explains: bool) -> None:
    assert DEFAULT.asks_to_continue(text) is asks
    assert DEFAULT.explains_limit(text) is explains


# (text, claims a write when one is pending)
CLAIMS = [
    ("I reached the step limit before I could save the goal. Should I continue?", False),
    ("The goal has not been saved yet. Should I continue and save it?", False),
    ("I saved your goal of 100 kg. Shall I continue?", True),
    ("I've logged the workout.", True),
    ("Your goal has been saved.", True),
    ("Atingi o limite antes de salvar a meta. Quer que eu continue e salve a meta?", False),
    ("Salvei sua meta de 130 kg.", True),
    ("A meta foi salva com sucesso.", True),
    ("Llegué al límite antes de guardar la meta. ¿Quieres que la guarde?", False),
    ("Guardé tu meta.", True),
    ("Tu meta ha sido guardada.", True),
    ("La meta está guardada.", True),
    # negated or not yet done: no claim
    ("Nothing has been saved yet. Should I continue?", False),
    ("No goal was saved.", False),
    ("I reached the limit before I saved your goal.", False),
    ("I haven't saved your goal; it has not been saved yet.", False),
    ("I hit the limit, so your goal was never saved.", False),
    ("Nada foi salvo ainda. Quer que eu continue?", False),
    ("Ainda não salvei sua meta.", False),
    ("A meta não foi salva.", False),
    ("Nada fue guardado todavía. ¿Sigo?", False),
    ("Todavía no guardé tu meta.", False),
    ("La meta no fue guardada.", False),
    # real claims still fire, negations elsewhere in the text notwithstanding
    ("I saved your goal", True),
    ("Your goal is saved", True),
    ("Salvei sua meta", True),
    ("Guardé tu meta", True),
    ("I hit the step limit, but I saved your goal. No need to worry.", True),
    ("Salvei sua meta no aplicativo.", True),
]


@pytest.mark.parametrize(("text", "claims"), CLAIMS)
def test_claims_of_a_write(text: str, claims: bool) -> None:
    assert (DEFAULT.claim(text, writes_pending=True) is not None) is claims


def test_default_claims_only_when_a_write_was_pending() -> None:
    assert DEFAULT.claim("I saved your goal.", writes_pending=False) is None


def test_scenario_phrases_count_whatever_was_pending() -> None:
    tuned = ClosingPhrases(must_not_contain=("meta salva",))
    assert tuned.claim("Pronto, META SALVA!", writes_pending=False) == "meta salva"


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("I have not saved your goal yet. Should I continue?", False),
        ("I reached the limit before I saved your goal.", False),
        ("I hit the limit, but I saved your goal.", True),
        ("Saved your goal!", True),
    ],
)
def test_scenario_phrases_negated_are_no_claim(text: str, claims: bool) -> None:
    tuned = ClosingPhrases(must_not_contain=("saved your goal",))
    assert (tuned.claim(text, writes_pending=False) is not None) is claims


def test_scenario_words_extend_the_defaults() -> None:
    text = "Bati no teto de passos. Posso ir em frente?"
    assert not DEFAULT.explains_limit(text)
    assert not DEFAULT.asks_to_continue(text)
    tuned = ClosingPhrases(limit_words=(*LIMIT_WORDS, "teto de passos"))
    assert tuned.explains_limit(text)
    assert "ir em frente" not in CONTINUE_WORDS
    assert ClosingPhrases(continue_words=(*CONTINUE_WORDS, "ir em frente")).asks_to_continue(text)


def test_normalise_drops_accents_case_and_curly_apostrophes() -> None:
    assert normalise("  Límite\u2019S   ÉTAPAS ") == "limite's etapas"


@pytest.mark.parametrize(
    ("text", "order"),
    [
        (NOT_EXECUTED_RESULT, False),
        ("2026-11-28 bench press 3x5 @ 80 kg", False),
        (f"{NOT_EXECUTED_RESULT} Answer with what you know and ask whether to continue.", True),
        ("Não executado. Pergunte ao usuário se deve continuar.", True),
        ("No ejecutado. Pregunta si debe continuar.", True),
        (STEP_LIMIT_INSTRUCTION, True),
    ],
)
def test_orders_in_results(text: str, order: bool) -> None:
    assert (holds_order(text) is not None) is order
