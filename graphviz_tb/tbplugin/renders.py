"""Pages drawn off TensorBoard's request threads, one at a time, and kept by content.

A render of a big graph takes seconds (NASNet-Large's 65,000-op training step, say), so it
never runs on the thread serving a request: a job is queued to one worker thread of our
own, and requests only wait for it (``/view``) or ask how far it got (``/progress``, which the
tab polls to show a progress bar).  TensorBoard's other requests keep being served meanwhile;
renders are serialised, so two users opening the tab draw each graph once, one after the other.

A finished page is kept under its key, a digest of everything it is drawn from (see
:mod:`.runs`), so the same content is drawn once; the pages kept are bounded in number and in
bytes, the least recently used going first.  A render that fails keeps its one-line message the
same way, so asking again answers at once.  The worker is a daemon thread: stopping
TensorBoard never waits for a render.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import GraphvizTbError

__all__ = ["Job", "Renders"]

#: What the page cache may hold at most (pages of a 65,000-op graph are about 10 MB).
MAX_PAGES = 32
MAX_BYTES = 256 * 1024 * 1024


@dataclass
class Job:
    """One page being drawn: where it is (``stage``, and ``done`` of ``total`` group layouts
    while laying out), then the page or the error.  Written by the worker only."""

    key: str
    title: str
    stage: str = "queued"
    done: int = 0
    total: int = 0
    page: bytes | None = None
    error: str | None = None
    code: int = 200  # the HTTP status of the answer: 422 for a graph we cannot draw
    started: float = field(default_factory=time.monotonic)
    seconds: float | None = None
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    def status(self) -> dict[str, Any]:
        """The job as ``/progress`` reports it."""
        state = "failed" if self.error is not None else "done" if self.page is not None \
            else "rendering"
        return {"state": state, "stage": self.stage, "done": self.done, "total": self.total,
                "title": self.title, "error": self.error,
                "seconds": round(self.seconds if self.seconds is not None
                                 else time.monotonic() - self.started, 2)}

    def progress(self, done: int, total: int) -> None:
        """The pipeline's layout progress callback (the page is written after the last)."""
        self.stage = "writing the page" if done >= total else "laying out"
        self.done, self.total = done, total


#: What a render does: given its job (to report progress on), the page's bytes.
Work = Callable[[Job], bytes]


class Renders:
    """The page cache and the one worker thread that fills it."""

    def __init__(self, max_pages: int = MAX_PAGES, max_bytes: int = MAX_BYTES) -> None:
        self._max_pages, self._max_bytes = max_pages, max_bytes
        self._kept: OrderedDict[str, Job] = OrderedDict()  # finished, by key
        self._running: dict[str, Job] = {}
        self._queue: queue.Queue[tuple[Job, Work]] = queue.Queue()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def submit(self, key: str, title: str, work: Work) -> Job:
        """The job drawing the page ``key``: the finished one, the one under way, or a new one
        queued now (``work`` is called on the worker thread)."""
        with self._lock:
            job = self._kept.get(key)
            if job is not None:
                self._kept.move_to_end(key)
                return job
            job = self._running.get(key)
            if job is None:
                job = self._running[key] = Job(key, title)
                self._queue.put((job, work))
                if self._worker is None:
                    self._worker = threading.Thread(target=self._work, daemon=True,
                                                    name="tbgraph-render")
                    self._worker.start()
            return job

    def kept(self) -> int:
        """How many finished pages (and failures) are kept."""
        with self._lock:
            return len(self._kept)

    def _work(self) -> None:
        while True:
            job, work = self._queue.get()
            try:
                job.page = work(job)
            except GraphvizTbError as exc:
                job.error, job.code = str(exc), 422
            except MemoryError:
                job.error, job.code = "out of memory drawing this graph", 422
            except Exception as exc:  # a bug of ours: said in one line, the worker lives on
                job.error, job.code = f"tbgraph failed: {type(exc).__name__}: {exc}", 500
            job.seconds = time.monotonic() - job.started
            job.stage = "done" if job.error is None else "failed"
            with self._lock:
                del self._running[job.key]
                self._keep(job)
            job.finished.set()

    def _keep(self, job: Job) -> None:
        """Keep a finished job, dropping the least recently used past the bounds."""
        self._kept[job.key] = job
        total = sum(len(j.page or b"") for j in self._kept.values())
        while len(self._kept) > 1 and (len(self._kept) > self._max_pages
                                       or total > self._max_bytes):
            _, dropped = self._kept.popitem(last=False)
            total -= len(dropped.page or b"")
