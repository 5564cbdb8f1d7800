"""Where a chunked pass runs: here, a chunk at a time (:class:`LocalRunner`), or on the partitions of a Dask
cluster (:class:`bnfk_core.data.dask_runner.DaskRunner`) -- chosen once, by :func:`runner_for`.

Every chunked pass of bnfk (the streaming reader's two passes, the row-wise analyses' pass, imputation in
blocks) is written as a function of one piece of the file plus a few shared arguments, and hands it to a
runner:

* :meth:`Runner.map_frames` ``(fn, layout, args)``: ``fn(frame, row0, *args)`` for every piece of the file
  (a frame of raw cell text, see :func:`bnfk_core.data.reading.iter_chunks`), in file order; yields
  ``(rows, result, fraction of the file done)``.  ``row0`` is the piece's first data row (0-based) here; on
  Dask a partition does not know it and gets 0 (messages then count rows from the partition).
* :meth:`Runner.map` ``(fn, items, args)``: ``fn(item, *args)`` for every item (a block of the file, say), in
  order.

The pieces' results are merged by the caller, on the client: so a pass gives the same result on both runners.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from ..errors import DataError
from .reading import DEFAULT_CHUNKSIZE, FileLayout, chunks_done

__all__ = ["Runner", "LocalRunner", "runner_for", "ENGINES"]

#: the runners by name (``engine=`` of the chunked entry points, the CLI's ``--engine``)
ENGINES = ("local", "dask")


class Runner(Protocol):
    """What every chunked pass takes (module docstring)."""

    name: str

    def map_frames(
        self, fn: Callable, layout: FileLayout, args: tuple = ()
    ) -> Iterator[tuple[int, object, float]]: ...

    def map(self, fn: Callable, items: Iterable, args: tuple = ()) -> Iterator: ...


class LocalRunner:
    """Runs the pieces one after the other in this process; a piece of a file is ``chunksize`` rows."""

    name = "local"

    def __init__(self, chunksize: int = DEFAULT_CHUNKSIZE):
        self.chunksize = int(chunksize)

    def map_frames(self, fn, layout, args=()):
        row0 = 0
        for chunk, done in chunks_done(layout, self.chunksize):
            yield len(chunk), fn(chunk, row0, *args), done
            row0 += len(chunk)

    def map(self, fn, items, args=()):
        for item in items:
            yield fn(item, *args)


@contextlib.contextmanager
def runner_for(
    engine: str = "local",
    *,
    chunksize: int = DEFAULT_CHUNKSIZE,
    scheduler: str | None = None,
    client=None,
    blocksize="64MB",
    error=DataError,
):
    """The runner of ``engine`` (``local`` or ``dask``) for the duration of the block: a :class:`LocalRunner`
    of ``chunksize`` rows, or a :class:`~bnfk_core.data.dask_runner.DaskRunner` on ``client``, else on the
    cluster at ``scheduler``, else on a local cluster of two processes started for the block (partitions of
    ``blocksize`` bytes of CSV).  An unknown engine is an ``error`` in one sentence."""
    if engine == "local":
        yield LocalRunner(chunksize)
        return
    if engine != "dask":
        raise error(f"engine must be 'local' or 'dask', not {engine!r}.")
    from .dask_runner import DaskRunner, connect

    with connect(scheduler, client) as c:
        yield DaskRunner(c, blocksize)
