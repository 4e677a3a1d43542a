"""Racing clients for the collect tests: jobs on threads released together by a barrier."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def at_once(jobs: list[Callable[[], T]]) -> list[T]:
    """Run ``jobs`` on threads released together by a barrier; their results in the jobs' order (the first
    exception of any is raised here, after every thread has ended)."""
    barrier = threading.Barrier(len(jobs))
    out: list[tuple[T] | None] = [None] * len(jobs)
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            barrier.wait()
            out[k] = (jobs[k](),)
        except BaseException as exc:  # pragma: no cover - raised below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(jobs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return [x[0] for x in out if x is not None]
