"""engine/turns.py: the reconcile's lock lets the syncs waiting for it go first."""

from __future__ import annotations

import threading

import pytest

from helpers import eventually
from memvault.engine.turns import TurnLock


def test_a_thread_waiting_takes_its_turn_when_the_holder_steps_aside() -> None:
    lock = TurnLock()
    order: list[str] = []
    lock.acquire()

    def waiter() -> None:
        with lock:
            order.append("waiter")

    t = threading.Thread(target=waiter)
    t.start()
    eventually(lambda: lock.waiting == 1, what="the waiter blocked on the lock")
    assert lock.step_aside(lambda: order.append("aside")) is True
    order.append("holder again")
    lock.release()
    t.join(10)
    assert order == ["aside", "waiter", "holder again"]


def test_without_a_step_aside_the_holder_keeps_the_lock() -> None:
    lock = TurnLock()
    order: list[str] = []
    lock.acquire()
    t = threading.Thread(target=lambda: (lock.acquire(), order.append("waiter"), lock.release()))
    t.start()
    eventually(lambda: lock.waiting == 1)
    order.append("holder")
    lock.release()
    t.join(10)
    assert order == ["holder", "waiter"]


def test_held_twice_it_is_not_released_by_a_step_aside() -> None:
    lock = TurnLock()
    seen: list[int] = []
    with lock, lock:
        t = threading.Thread(target=lambda: (lock.acquire(), seen.append(1), lock.release()))
        t.start()
        eventually(lambda: lock.waiting == 1)
        assert lock.step_aside(lambda: seen.append(0)) is False  # a caller counts on it
        assert seen == [0]
    t.join(10)
    assert seen == [0, 1]


def test_only_the_holder_releases_or_steps_aside() -> None:
    lock = TurnLock()
    with pytest.raises(RuntimeError):
        lock.release()
    with pytest.raises(RuntimeError):
        lock.step_aside()
    lock.acquire()
    errors: list[BaseException] = []

    def other() -> None:
        try:
            lock.release()
        except RuntimeError as exc:
            errors.append(exc)

    t = threading.Thread(target=other)
    t.start()
    t.join(10)
    lock.release()
    assert len(errors) == 1


def test_an_exception_inside_the_step_aside_still_takes_the_lock_back() -> None:
    lock = TurnLock()
    lock.acquire()
    with pytest.raises(ValueError):
        lock.step_aside(lambda: (_ for _ in ()).throw(ValueError("cancelled")))
    lock.release()  # still ours: no RuntimeError
