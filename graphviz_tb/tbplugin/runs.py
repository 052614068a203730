"""The runs TensorBoard knows, read through its data provider: never a path.

TensorBoard's data provider lists, per plugin name, the runs and tags that logged blob
sequences; a run is whatever name it gives (a logdir's subdirectory, or a ``--logdir_spec``
name), so a run asked for in a request is looked up among those names, exactly, and nothing
in a request ever reaches the file system.  A run's graph blobs become a
:class:`graphviz_tb.logged.Logged` that ``graphviz_tb.api`` reads as it reads a logdir.

Two memos keep repeated requests cheap, both bounded and both keyed by what the provider says
about each blob (its key and wall time), so a run rewritten while TensorBoard is up is read
afresh: each blob's content digest (a page is cached by the digests of what it is drawn from),
and each run's listing (which reads its RunMetadata blobs to count their graphs).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from tensorboard.data import provider as tb_provider

from .. import api
from ..errors import GraphvizTbError
from ..logged import GRAPH_PLUGINS, Blob, Logged

__all__ = ["RunData", "Runs"]

#: The most steps read of one tag of one run (TensorBoard itself keeps 10 by default).
MAX_STEPS = 10_000
K = TypeVar("K")
V = TypeVar("V")


class Memo(Generic[K, V]):
    """A small thread-safe LRU map: the least recently used entries go past ``size``."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The value for ``key``, made (outside the lock) when missing."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


@dataclass(frozen=True)
class RunData:
    """One run's graph blobs, their identity (for the memos) and content digest."""

    run: str
    logged: Logged
    identity: tuple[tuple[str, str, int, float, str], ...]
    digest: Callable[[], str]


class Runs:
    """The runs with graphs, read through TensorBoard's data provider (each call in the
    context of the request it serves), and the memos of their digests and listings."""

    def __init__(self, data_provider: Any) -> None:
        self._provider = data_provider
        self._digests: Memo[tuple[str, float], str] = Memo(4096)
        self._listings: Memo[tuple[str, tuple], dict[str, Any]] = Memo(256)

    def all(self, ctx: Any, experiment: str) -> list[RunData]:
        """Every run that logged a graph or run metadata, by name."""
        return self._read(ctx, experiment, None)

    def run(self, ctx: Any, experiment: str, run: str) -> RunData | None:
        """The graph blobs of ``run``, or None when it is not a run with graphs: the name is
        compared with the provider's run names before anything is read."""
        found = self._read(ctx, experiment, run)
        return found[0] if found else None

    def _read(self, ctx: Any, experiment: str, only: str | None) -> list[RunData]:
        """The runs (``only`` that one, if it is one), each with its blobs: one listing and
        one read per plugin name, whatever the number of runs."""
        if self._provider is None:
            return []
        listed = {plugin: self._provider.list_blob_sequences(
            ctx, experiment_id=experiment, plugin_name=plugin) for plugin in GRAPH_PLUGINS}
        names = sorted({run for runs in listed.values() for run in runs})
        if only is not None:
            names = [only] if only in names else []
        blobs: dict[str, list[Blob]] = {name: [] for name in names}
        identity: dict[str, list[tuple[str, str, int, float, str]]] = {n: [] for n in names}
        for plugin, runs in listed.items():
            wanted = [name for name in names if name in runs]
            if not wanted:
                continue
            found = self._provider.read_blob_sequences(
                ctx, experiment_id=experiment, plugin_name=plugin, downsample=MAX_STEPS,
                run_tag_filter=tb_provider.RunTagFilter(runs=wanted))
            for run in wanted:
                for tag, data in sorted(found.get(run, {}).items()):
                    for datum in data:
                        for ref in datum.values:
                            read = partial(_read_blob, self._provider, ctx, ref.blob_key)
                            blobs[run].append(Blob(run, plugin, tag, datum.step,
                                                   datum.wall_time, read))
                            identity[run].append((plugin, tag, datum.step, datum.wall_time,
                                                  ref.blob_key))
        return [RunData(run, Logged(run, tuple(blobs[run])), tuple(identity[run]),
                        partial(self._run_digest, tuple(identity[run]), tuple(blobs[run])))
                for run in names]

    def listing(self, data: RunData) -> dict[str, Any]:
        """The run as ``/runs`` shows it: its graphs (by index, as ``/view`` takes them)
        and its recorded costs, or the one line saying why it cannot be read."""
        return self._listings.get((data.run, data.identity), partial(_listing, data))

    def _run_digest(self, identity: tuple[tuple[str, str, int, float, str], ...],
                    blobs: tuple[Blob, ...]) -> str:
        """One digest of every blob of the run: what its pages are drawn from."""
        whole = hashlib.sha256()
        for (plugin, tag, step, wall_time, key), blob in zip(identity, blobs, strict=True):
            digest = self._digests.get((key, wall_time), partial(_digest, blob))
            whole.update(f"{plugin}\0{tag}\0{step}\0{digest}\0".encode())
        return whole.hexdigest()


def _read_blob(data_provider: Any, ctx: Any, key: str) -> bytes:
    return bytes(data_provider.read_blob(ctx, blob_key=key))


def _digest(blob: Blob) -> str:
    return hashlib.sha256(blob.read()).hexdigest()


def _listing(data: RunData) -> dict[str, Any]:
    try:
        found = api.discover(data.logged)
    except GraphvizTbError as exc:
        return {"run": data.run, "graphs": [], "costs": [], "error": str(exc)}
    return {
        "run": data.run,
        "graphs": [{"index": index, "name": g.name, "kind": g.kind, "origin": g.origin,
                    "tag": g.tag, "step": g.step, "wall_time": g.wall_time}
                   for index, g in enumerate(found.graphs)],
        "costs": [{"name": c.name, "tag": c.tag, "step": c.step, "wall_time": c.wall_time}
                  for c in found.costs],
    }
