"""Reads answer each question alone, however many run at once: one ``Vault`` asked four
different questions by four threads gives every context exactly as the same question
asked alone — in-process and through the daemon's HTTP API (which serves from a
thread pool). The query's vector travels as an argument, never through the reader."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from helpers import make_vault, note, open_vault, running_daemon, write
from memvault.api import Vault
from memvault.client import DaemonClient
from memvault.core.results import Context
from memvault.index.embedder import HashEmbedder

QUESTIONS = (
    "What did we decide about the database schema?",
    "Who is Sarah Chen and what does she work on?",
    "Which designer draws the kiwis for the onboarding screens?",
    "When is the deadline for the payments migration?",
)
THREADS, ROUNDS = len(QUESTIONS), 25
BUDGET = 400


class ModelPacedEmbedder(HashEmbedder):
    """The hash embedder taking the time a model takes for a query (a few milliseconds,
    the GIL let go meanwhile, as onnxruntime does): other threads run while one embeds."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(0.003)
        return super().embed(texts)


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    root = make_vault(tmp_path)
    write(
        root,
        "people/ana.md",
        note(
            "Ana Lopez",
            "our designer",
            "## Work\n\nDraws the kiwis for the onboarding screens.\n"
            "Prefers Figma over sketches on paper.\nWorks from Lisbon on Tuesdays.\n",
        ),
    )
    write(
        root,
        "projects/payments.md",
        note(
            "Payments migration",
            "moving payments to the new ledger",
            "## Plan\n\nThe deadline for the payments migration is the end of March.\n"
            "Ledger rows are written twice until the cut-over.\n"
            "The database schema keeps one table per account.\n",
        ),
    )
    with open_vault(root, embedder=ModelPacedEmbedder()) as v:
        v.sync()
        yield v


def asked_together(ask: Callable[[str], Context]) -> list[tuple[str, Context]]:
    """Each question asked ROUNDS times by its own thread, all threads at once."""
    answers: list[tuple[str, Context]] = []
    lock = threading.Lock()
    start = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def run(question: str) -> None:
        try:
            start.wait()
            for _ in range(ROUNDS):
                ctx = ask(question)
                with lock:
                    answers.append((question, ctx))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=run, args=(q,), name=f"ask-{i}") for i, q in enumerate(QUESTIONS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert len(answers) == THREADS * ROUNDS
    return answers


def differing(ask: Callable[[str], Context]) -> list[str]:
    alone = {q: ask(q) for q in QUESTIONS}
    assert len({c.text for c in alone.values()}) == len(QUESTIONS)  # four different answers
    return [q for q, ctx in asked_together(ask) if ctx != alone[q]]


def test_contexts_asked_at_once_in_process_are_the_contexts_asked_alone(vault: Vault) -> None:
    wrong = differing(lambda q: vault.context(q, BUDGET))
    assert not wrong, f"{len(wrong)} of {THREADS * ROUNDS} contexts differ from the question alone"


def test_contexts_asked_at_once_through_the_daemon_are_the_contexts_asked_alone(
    vault: Vault,
) -> None:
    with running_daemon(vault):
        client = DaemonClient.running(vault.root)
        assert client is not None
        wrong = differing(lambda q: client.context(q, BUDGET))
    assert not wrong, f"{len(wrong)} of {THREADS * ROUNDS} contexts differ from the question alone"


def test_line_vectors_read_on_many_threads_past_the_kept_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the review: the kept line vectors were read and evicted with no lock;
    past the limit (32,768 lines; 64 here) threads reading at once raised KeyError or
    'dictionary changed size during iteration'. Every read returns every line it asks
    for that the cache holds."""
    import memvault.engine.embedding as embedding_module
    from memvault.core.excerpts import unit_texts
    from memvault.core.text import sha256_text

    monkeypatch.setattr(embedding_module, "LINE_VECTORS_KEPT", 64)
    root = make_vault(tmp_path)
    for i in range(40):
        lines = "\n".join(f"- point {i}-{j} about topic {j}" for j in range(6))
        write(root, f"notes/n{i:02}.md", f"# Note {i}\n\n{lines}\n")
    with open_vault(root) as v:
        v.sync()
        store, embedding = v.engine.store, v.engine.embedding
        shas = sorted(
            {sha256_text(t) for n in store.notes() for c in store.chunks_of(n.path)
             for t in unit_texts(c.text)}
        )  # fmt: skip
        held = set(store.cached(embedding.model_id(), shas))
        assert len(held) > 200
        errors: list[BaseException] = []
        short: list[int] = []

        def read(seed: int) -> None:
            rng = np.random.default_rng(seed)
            try:
                for _ in range(300):
                    ask = list(rng.choice(shas, 30, replace=False))
                    got = embedding.line_vectors(ask)
                    if set(got) != held & set(ask):
                        short.append(seed)
            except BaseException as e:
                errors.append(e)

        import sys

        threads = [threading.Thread(target=read, args=(s,)) for s in range(4)]
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)  # threads switch as often as a busy server's
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            sys.setswitchinterval(interval)
        assert errors == [] and short == []
