"""kube.poll.poll_until, the SDK's one polling loop, on a fake clock (no real waiting)."""

from __future__ import annotations

from collections.abc import Callable

from rayqueue_sdk.kube.poll import poll_until


class FakeTime:
    """A clock that moves only when slept on, recording each ask and pause."""

    def __init__(self) -> None:
        self.now = 0.0
        self.events: list[str] = []

    def sleep(self, seconds: float) -> None:
        self.events.append(f"sleep {seconds:g}")
        self.now += seconds

    def clock(self) -> float:
        return self.now

    def asking(self, answers: list[object]) -> Callable[[], object]:
        it = iter(answers)

        def ask() -> object:
            self.events.append(f"ask at {self.now:g}")
            return next(it, None)

        return ask


def test_the_first_truthy_answer_ends_the_poll() -> None:
    t = FakeTime()
    got = poll_until(t.asking([None, 0, "", "ready"]), timeout=10, interval=1, sleep=t.sleep, clock=t.clock)
    assert got == "ready"
    assert t.events == ["ask at 0", "sleep 1", "ask at 1", "sleep 1", "ask at 2", "sleep 1", "ask at 3"]


def test_a_backoff_doubles_up_to_its_ceiling_and_never_sleeps_past_the_timeout() -> None:
    t = FakeTime()
    got = poll_until(t.asking([]), timeout=5, interval=0.5, max_interval=2, sleep=t.sleep, clock=t.clock)
    assert got is None
    pauses = [e for e in t.events if e.startswith("sleep")]
    assert pauses == ["sleep 0.5", "sleep 1", "sleep 2"]  # then 3.5 + 2 > 5: give up, not sleep
    assert t.now <= 5 and t.events[-1] == "ask at 3.5"


def test_wait_first_pauses_before_the_first_ask() -> None:
    t = FakeTime()
    got = poll_until(
        t.asking([True]), timeout=1, interval=0.25, wait_first=True, sleep=t.sleep, clock=t.clock
    )
    assert got is True and t.events == ["sleep 0.25", "ask at 0.25"]


def test_a_timeout_shorter_than_one_pause_asks_once() -> None:
    t = FakeTime()
    assert poll_until(t.asking([]), timeout=0.1, interval=0.2, sleep=t.sleep, clock=t.clock) is None
    assert t.events == ["ask at 0"]
