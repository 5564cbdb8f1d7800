"""The Dask runner (:class:`DaskRunner`, the only module importing dask): chunked passes on a Dask cluster.

What is distributed: checking and cutting the file (:meth:`DaskRunner.file_layout` scans its records on a
worker; a CSV is cut into blocks at line ends by ``dask.bytes.read_bytes``, each parsed where it is read, as
``dask.dataframe.read_csv`` parses it; Parquet row groups by ``dask.dataframe.read_parquet``), and the pass
functions over its pieces (:meth:`DaskRunner.map_frames`) or over blocks of it (:meth:`DaskRunner.map`) -- the
very same functions as :class:`bnfk_core.data.runners.LocalRunner` runs here (the streaming reader's level
counts and distinct rows, the row-wise analyses' expected counts, imputation's blocks).  Results can also stay
on the workers (:meth:`DaskRunner.map_frames_kept`, :meth:`DaskRunner.keep`, :meth:`DaskRunner.keep_joined`)
and be merged there (:meth:`DaskRunner.reduce_kept`): the reader's pass 2 and its merges, the EM's jobs.

What stays on the client: merging the small results (the levels), deriving the states, and deciding: the
structure search's moves and the fitted CPTs.  The search's counting passes run on the workers too
(:meth:`DaskRunner.family_counter`): the distinct rows are cut into one block per worker and sent once; each
batch of families the search asks for is counted on every block where it lives, and the client adds the
blocks' tables.  The result is therefore identical to the single-process one's.

The workers need bnfk installed (the same version) and the file at the same path (a shared file
system, or an ``s3://``/``gs://`` URL their filesystem libraries read).

Connecting is bounded (:func:`connect`): the address is checked first (:func:`check_address`: one sentence for
anything that is not ``tcp://host:port``, ``tls://host:port`` or ``host:port``), then the scheduler must
accept the connection *and* send its first answer (its handshake; a Dask scheduler sends it at once) within
the timeout -- :data:`DEFAULT_TIMEOUT` seconds, or what :func:`timeout_set` (the CLI's ``--dask-timeout``)
sets
-- and have a worker within the same time.  A socket that accepts and never answers is refused after the
timeout instead of hanging the run.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import socket
import threading
import urllib.parse

from ..errors import BnfkError, DataError, shorten
from .limits import DEFAULT_TIMEOUT, MAX_TIMEOUT
from .reading import printable

__all__ = [
    "DaskRunner",
    "local_cluster_client",
    "connect",
    "check_address",
    "timeout_set",
    "dask_timeout",
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
]

_TIMEOUT: contextvars.ContextVar = contextvars.ContextVar("bnfk_dask_timeout", default=DEFAULT_TIMEOUT)
_SCHEMES = ("tcp", "tls")
_ADDRESS_FORM = "give an address such as tcp://10.0.0.5:8786 (tcp:// or tls://, a host and a port 1-65535)"


def dask_timeout() -> float:
    """The connect / first-answer timeout (seconds) :func:`connect` uses when given none."""
    return _TIMEOUT.get()


@contextlib.contextmanager
def timeout_set(seconds: float | None):
    """Within the block, :func:`connect` waits at most ``seconds`` (None: :data:`DEFAULT_TIMEOUT`)."""
    seconds = DEFAULT_TIMEOUT if seconds is None else float(seconds)
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT):
        raise DataError(
            f"The Dask timeout must be a number of seconds from 0 to {MAX_TIMEOUT:g}, got {seconds!r}."
        )
    token = _TIMEOUT.set(seconds)
    try:
        yield
    finally:
        _TIMEOUT.reset(token)


def check_address(address) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a scheduler address (``tcp://host:port``, ``tls://host:port``,
    ``host:port``, ``[v6]:port``); a DataError in one sentence, the address cut to ~80 characters, for
    anything else."""
    if not isinstance(address, str):
        raise DataError(f"The Dask scheduler address must be text; {_ADDRESS_FORM}.")
    shown = shorten(printable(address))
    text = address.strip()
    if not text:
        raise DataError(
            f"The Dask scheduler address is empty; {_ADDRESS_FORM}, or leave it out for a local cluster."
        )
    bad = f"The Dask scheduler address '{shown}' is not usable"
    if len(text) > 300 or any(c.isspace() or not c.isprintable() for c in text):
        raise DataError(f"{bad}; {_ADDRESS_FORM}.")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    scheme = scheme.lower()
    if scheme not in _SCHEMES:
        raise DataError(
            f"{bad}: bnfk connects over {' or '.join(_SCHEMES)}, not '{shorten(scheme, 20)}'; "
            f"{_ADDRESS_FORM}."
        )
    try:
        parts = urllib.parse.urlsplit("//" + rest)
        host, port = parts.hostname, parts.port
    except ValueError:  # '[::1' (an unclosed IPv6 bracket), a port out of 0..65535 or not a number
        raise DataError(f"{bad}: the host or the port cannot be read; {_ADDRESS_FORM}.") from None
    if parts.path or parts.query or parts.fragment or parts.username or parts.password or "@" in rest:
        raise DataError(f"{bad}: it holds more than a host and a port; {_ADDRESS_FORM}.")
    if not host:
        raise DataError(f"{bad}: it names no host; {_ADDRESS_FORM}.")
    if port is None or not 1 <= port <= 65535:
        raise DataError(f"{bad}: it needs a port from 1 to 65535; {_ADDRESS_FORM}.")
    return scheme, host, port


def _in_thread(fn, seconds: float):
    """``(finished, result, exception)`` of ``fn()`` run in a daemon thread for at most ``seconds``."""
    box: dict = {}

    def run():
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True, name="bnfk-dask-connect")
    t.start()
    t.join(seconds)
    return not t.is_alive(), box.get("result"), box.get("error")


def _probe(scheme: str, host: str, port: int, shown: str, timeout: float) -> None:
    """Connect to ``host:port`` and (plain tcp) wait for the scheduler's first bytes, each within
    ``timeout``."""
    where = f"the Dask scheduler at {shown}"
    done, infos, exc = _in_thread(lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout)
    if not done:
        raise DataError(f"Cannot reach {where}: its host name was not resolved within {timeout:g} s.")
    if exc is not None or not infos:
        raise DataError(f"Cannot reach {where}: the host name does not resolve.")
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.settimeout(timeout)
        try:
            sock.connect(addr)
        except TimeoutError:
            raise DataError(
                f"Cannot reach {where}: no connection within {timeout:g} s (use --dask-timeout "
                "to wait longer)."
            ) from None
        except OSError as err:
            raise DataError(
                f"Cannot reach {where}: {(err.strerror or 'connection failed').lower()}."
            ) from None
        if scheme == "tcp":
            try:
                first = sock.recv(1)
            except TimeoutError:
                raise DataError(
                    f"{where[0].upper()}{where[1:]} accepted the connection but did not answer within "
                    f"{timeout:g} s; is it a Dask scheduler? (--dask-timeout waits longer)."
                ) from None
            except OSError as err:
                raise DataError(
                    f"Cannot reach {where}: {(err.strerror or 'connection reset').lower()}."
                ) from None
            if not first:
                raise DataError(
                    f"{where[0].upper()}{where[1:]} closed the connection without answering; is it a "
                    "Dask scheduler?"
                )
    finally:
        sock.close()


def _client(address: str, timeout: float):
    """A ``distributed.Client`` connected to ``address`` with a worker, all within ``timeout`` seconds."""
    from distributed import Client

    scheme, host, port = check_address(address)
    shown = shorten(printable(address.strip()))
    if scheme == "tls" and not _tls_configured():
        raise DataError(
            f"The Dask scheduler at {shown} speaks TLS, and this machine's Dask configuration names no "
            "certificates for it (distributed.comm.tls.ca-file, .client.cert and .client.key); set them, "
            "or connect over tcp://."
        )
    _probe(scheme, host, port, shown, timeout)

    def make():
        c = Client(address.strip(), timeout=f"{timeout}s")
        try:
            c.wait_for_workers(1, timeout=timeout)
        except BaseException:
            c.close()
            raise
        return c

    done, client, exc = _in_thread(make, 2 * timeout + 5)
    if not done:
        raise DataError(
            f"The Dask scheduler at {shown} did not finish connecting within {2 * timeout + 5:g} s."
        )
    if isinstance(exc, TimeoutError):  # asyncio's too (Python >= 3.11)
        raise DataError(
            f"The Dask scheduler at {shown} has no worker after {timeout:g} s; start one "
            f"(dask worker {shown}) or use a local cluster."
        ) from None
    if exc is not None:
        raise DataError(
            f"Cannot use the Dask scheduler at {shown}: {shorten(str(exc) or type(exc).__name__)}."
        ) from None
    return client


def _tls_configured() -> bool:
    """Whether Dask's configuration gives the client TLS certificates (a ``tls://`` scheduler needs them)."""
    import dask

    return bool(dask.config.get("distributed.comm.tls.ca-file", None)) and bool(
        dask.config.get("distributed.comm.tls.client.cert", None)
    )


def local_cluster_client(n_workers: int = 2):
    """A ``distributed.Client`` on a new local cluster of processes (one thread each)."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=int(n_workers), threads_per_worker=1, processes=True, dashboard_address=None
    )
    return Client(cluster)


@contextlib.contextmanager
def connect(scheduler: str | None = None, client=None, timeout: float | None = None):
    """The Dask client to use: ``client`` if given, else one connected to ``scheduler`` (an address such as
    ``tcp://10.0.0.5:8786``; checked, and bounded by ``timeout`` seconds, default :func:`dask_timeout`: see
    the module docstring), else one on a new local cluster of two processes; the ones opened here are closed
    again on exit."""
    if client is not None:
        yield client
        return
    try:
        import distributed  # noqa: F401 - only whether it is installed
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise DataError("The dask engine needs dask[distributed]; pip install 'dask[distributed]'.") from exc
    if scheduler is not None:
        own = _client(scheduler, dask_timeout() if timeout is None else float(timeout))
    else:
        own = local_cluster_client()
    try:
        yield own
    except (BnfkError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - a remote cluster that cannot run bnfk's tasks
        if scheduler is None:
            raise
        raise DataError(
            f"The Dask cluster at {shorten(printable(scheduler.strip()))} could not run bnfk's tasks "
            f"({type(exc).__name__}: {shorten(str(exc), 120)}); its scheduler and workers need the same "
            "Python packages and bnfk version as this process."
        ) from None
    finally:
        cluster = getattr(own, "cluster", None)
        own.close()
        if cluster is not None and scheduler is None:
            cluster.close()


def _partitions(layout, blocksize):
    """The file as a list of ``(delayed piece, the function that turns it into raw cell text)``.

    A CSV file is cut into blocks of about ``blocksize`` bytes that end at a line end
    (``dask.bytes.read_bytes``); each block is parsed where it is read (:class:`_CsvText`), as
    ``dask.dataframe.read_csv`` would parse it (pandas' C parser, object columns, no missing-value
    conversion) -- without importing dask.dataframe here (0.7 CPU s of the client)."""
    if layout.fmt == "parquet":
        import dask.dataframe as dd

        ddf = dd.read_parquet(layout.path, split_row_groups=True)
        return [(p, _ParquetText(layout.header)) for p in ddf.to_delayed()]
    from dask.bytes import read_bytes

    _, blocks = read_bytes(layout.path, delimiter=b"\n", blocksize=blocksize, sample=False)
    blocks = [b for file_blocks in blocks for b in file_blocks]
    return [(b, _CsvText(layout, k == 0)) for k, b in enumerate(blocks)]


class _CsvText:
    """A block of a CSV file's bytes as the whole-file reader reads its records
    (:func:`bnfk_core.data.reading.as_whole_file`); the file's first block starts with the header line."""

    def __init__(self, layout, first: bool):
        self.layout, self.first = layout, first

    def __call__(self, block: bytes):
        import io

        import pandas as pd

        from .reading import as_whole_file

        layout = self.layout
        # object columns, the parser's own strings, as the single-process reader parses (Arrow strings cost a
        # copy of every cell in and out: 4 of a worker's 25 CPU seconds on a 2,000,000-row file)
        df = pd.read_csv(
            io.BytesIO(block),
            sep=layout.delimiter,
            dtype=object,
            keep_default_na=False,
            na_filter=False,
            header=0 if self.first else None,
            names=layout.fields,
            encoding=layout.encoding,
            skip_blank_lines=True,
        )
        return as_whole_file(df, layout)


class _ParquetText:
    """A Parquet partition as raw cell text (a missing value is ``""``), columns named by the header."""

    def __init__(self, header):
        self.header = tuple(header)

    def __call__(self, df):
        import pandas as pd

        return pd.DataFrame(
            {
                h: df[c].astype(object).where(df[c].notna(), "").astype(str).to_numpy(dtype=object)
                for h, c in zip(self.header, df.columns)
            }
        )


def _on_frame(df, as_text, fn, args):
    """One partition's result: ``(rows, fn(frame of raw text, 0, *args))``."""
    if as_text is not None:
        df = as_text(df)
    return len(df), fn(df, 0, *args)


class DaskRunner:
    """Runs the pieces on the workers of ``client`` (:mod:`bnfk_core.data.runners`); a piece of a file is a
    partition of ``blocksize`` bytes of CSV (a row group of Parquet).  The shared arguments are sent to every
    worker once; results come back in order."""

    name = "dask"

    def __init__(self, client, blocksize="64MB"):
        self.client, self.blocksize = client, blocksize

    @property
    def n_workers(self) -> int:
        """The workers the cluster has now (passes cut their work into at least a few items per worker)."""
        return len(self.client.scheduler_info().get("workers", {}))

    def _blocksize(self, layout):
        """Bytes of CSV a partition: :attr:`blocksize`, smaller (down to 1 MiB) for a local file that would
        give fewer than two partitions per worker (a 95 MB file read in 64 MB blocks is one partition to Dask:
        one worker parses it all while the other waits)."""
        import os

        from dask.utils import parse_bytes

        size = parse_bytes(self.blocksize) if isinstance(self.blocksize, str) else int(self.blocksize)
        try:
            whole = os.path.getsize(layout.path)
        except (OSError, TypeError, ValueError):
            return size
        return max(1, min(size, max(math.ceil(whole / (2 * max(self.n_workers, 1))), 2**20)))

    def _shared(self, args: tuple) -> tuple:
        """The shared arguments as futures held by every worker (each one object, even a list; a fresh key
        each time, so a pass does not lose data that an earlier pass with an equal argument is releasing)."""
        return tuple(self.client.scatter([a], broadcast=True, hash=False)[0] for a in args)

    def file_layout(self, path, fmt=None, source=None):
        """:func:`bnfk_core.data.reading.file_layout` of ``path`` run on a worker (its scans of the records
        read the file where the partitions will be read, not here); its refusals are raised here."""
        from .reading import file_layout

        return self.client.submit(file_layout, path, fmt, source, pure=False).result()

    def map_frames(self, fn, layout, args=()):
        import dask

        if layout.fmt == "csv" and layout.quoted_blanks:
            # a record of one blank quoted field: pandas' parser on the partitions would read it as a row, so
            # the file is read here by the whole-file reader's record parser (the same table)
            from .reading import DEFAULT_CHUNKSIZE, chunks_done

            row0 = 0
            for chunk, done in chunks_done(layout, DEFAULT_CHUNKSIZE):
                yield len(chunk), fn(chunk, row0, *args), done
                row0 += len(chunk)
            return
        parts = _partitions(layout, self._blocksize(layout))
        args = self._shared(args)
        futures = self.client.compute([dask.delayed(_on_frame)(p, as_text, fn, args) for p, as_text in parts])
        n = max(len(futures), 1)
        for k, fut in enumerate(futures):
            rows, result = fut.result()
            yield rows, result, (k + 1) / n

    def map_frames_kept(self, fn, layout, args=(), show=None):
        """:meth:`map_frames` whose results stay on the workers: yields ``(rows, kept piece, show(result),
        fraction done)`` in file order, the kept piece a future for :meth:`keep` / :meth:`reduce_kept` and
        only ``show(result)`` (small: a partition's levels) sent here."""
        import dask

        parts = _partitions(layout, self._blocksize(layout))
        args = self._shared(args)
        rows_results = self.client.compute(
            [dask.delayed(_on_frame)(p, as_text, fn, args) for p, as_text in parts]
        )
        kept = [self.client.submit(_second, f, pure=False) for f in rows_results]
        shown = [self.client.submit(_shown, f, show, pure=False) for f in rows_results]
        del rows_results
        n = max(len(kept), 1)
        for k, (piece, fut) in enumerate(zip(kept, shown)):
            rows, result = fut.result()
            yield rows, piece, result, (k + 1) / n

    def reduce_kept(self, fn, kept, finish=None):
        """``fn(pieces)`` applied pairwise over kept pieces, on the workers, until one is left; its result
        here (``fn`` must not depend on how the pieces are paired: integer counts added, say), or
        ``finish(that result)``, computed on the worker holding it."""
        level = list(kept)
        if not level:
            return _finished(fn, finish, [])
        while len(level) > 1:
            level = [
                self.client.submit(fn, level[i : i + 2], pure=False) if i + 1 < len(level) else level[i]
                for i in range(0, len(level), 2)
            ]
        return self.client.submit(_finished, fn, finish, level, pure=False).result()

    def send(self, items) -> list:
        """Every item sent to a worker (spread over them) and kept there: futures, in order, for :meth:`keep`
        (data that would otherwise travel inside the task graph)."""
        return self.client.scatter(list(items), hash=False)

    def keep(self, fn, items, args=()) -> list:
        """``fn(item, *args)`` of every item computed on the workers and *kept* there: a list of futures, in
        order, for :meth:`map_kept` (e.g. the CPTs' EM's jobs, made ready once per DAG and completed once per
        iteration)."""
        args = self._shared(args)
        return [self.client.submit(fn, item, *args, pure=False) for item in items]

    def keep_joined(self, take, join, kept, items, args=()) -> list:
        """Pieces made from kept pieces (:meth:`keep`) and kept in their turn: for every item, a list of
        ``(k, what)``, ``take(kept[k], what)`` runs on the worker holding ``kept[k]`` and ``join(those
        results, *args)`` where most of them are (one: the same worker); a list of futures, in order."""
        args = self._shared(args)
        out = []
        for item in items:
            pieces = [
                self.client.submit(_unpacked(take), kept[k], _Packed(what), pure=False) for k, what in item
            ]
            out.append(self.client.submit(join, pieces, *args, pure=False))
        return out

    def map_kept(self, fn, kept, args=()) -> list:
        """``fn(piece, *args)`` of every kept piece (:meth:`keep`), on the worker holding it; the results in
        order.  One task a worker runs ``fn`` on each of the pieces it holds, in order: a task costs the
        client about a millisecond of its IO thread, and a worker holds many pieces (the EM's items, every
        iteration).  ``args`` are small (an iteration's CPTs) and go with each task: scattering them to every
        worker first costs a round trip to each, every iteration."""
        from distributed import wait

        kept = list(kept)
        wait(kept)
        holders = self.client.who_has(kept)
        by_worker: dict = {}
        for k, piece in enumerate(kept):
            held_by = holders.get(piece.key) or (None,)
            by_worker.setdefault(held_by[0], []).append(k)
        tasks = [
            self.client.submit(
                _each,
                fn,
                [kept[k] for k in ks],
                args,
                workers=None if w is None else [w],
                allow_other_workers=True,
                pure=False,
            )
            for w, ks in by_worker.items()
        ]
        out: list = [None] * len(kept)
        for ks, results in zip(by_worker.values(), self.client.gather(tasks)):
            for k, result in zip(ks, results):
                out[k] = result
        return out

    def family_counter(self, shifted, weights, cards):
        """The search's counter on the cluster
        (:class:`bnfk_core.learning.available_case.AvailableCaseScorer`'s
        ``counter``): the rows ``shifted`` (:func:`bnfk_core.data.counts.shifted_matrix`, columns by rows) and
        their ``weights`` cut into one contiguous block per worker and sent to it once; the returned
        ``count(families)`` counts every family on each block there (one thread a worker) and adds the blocks'
        tables here.  With integer weights the sums are exact, so the tables equal one process's
        (:func:`bnfk_core.data.counts.family_tables`)."""
        return _BlockCounter(self.client, shifted, weights, cards)

    def map(self, fn, items, args=()):
        items = list(items)
        n = len(items)
        args = self._shared(args)
        window = 2 * max(1, len(self.client.scheduler_info().get("workers", {})) or 1)
        futures = {}
        for b in range(n):
            while len(futures) < window and b + len(futures) < n:
                c = b + len(futures)
                futures[c] = self.client.submit(fn, items[c], *args, pure=False)
            yield futures.pop(b).result()


def _finished(fn, finish, pieces):
    """``fn(pieces)``, or ``finish`` of it."""
    merged = fn(pieces)
    return merged if finish is None else finish(merged)


def _each(fn, pieces: list, args: tuple) -> list:
    """``fn(piece, *args)`` of every piece, in order (:meth:`DaskRunner.map_kept`: one worker's pieces)."""
    return [fn(piece, *args) for piece in pieces]


def _second(pair):
    return pair[1]


def _shown(pair, show):
    """A partition's rows and what the client needs of its result (all of it without ``show``)."""
    rows, result = pair
    return rows, result if show is None else show(result)


class _Packed:
    """An argument of a task that Dask sends as one object: a list of thousands of small lists given as is is
    walked item by item on the client when the task is made (most of the client's CPU in ``submit``)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __getstate__(self):  # a tuple: pickle skips __setstate__ for a false state (an empty list)
        return (self.value,)

    def __setstate__(self, state):
        (self.value,) = state


def _unpacked(fn):
    """``fn`` called with every :class:`_Packed` argument unpacked."""
    return functools.partial(_call_unpacked, fn)


def _call_unpacked(fn, *args):
    return fn(*(a.value if isinstance(a, _Packed) else a for a in args))


def _block_tables(block, weights, families, cards):
    """One block's tables of ``families`` (on a worker; one thread, the worker's own)."""
    from .counts import family_tables

    return family_tables(block, families.value, cards, weights, threads=1)


class _BlockCounter:
    """``count(families)`` over row blocks held by the workers (:meth:`DaskRunner.family_counter`)."""

    def __init__(self, client, shifted, weights, cards):
        import numpy as np

        self.client, self.cards = client, [int(c) for c in cards]
        workers = sorted(client.scheduler_info().get("workers", {})) or [None]
        n = int(shifted.shape[1])
        cuts = np.linspace(0, n, len(workers) + 1).astype(np.int64)
        self.blocks = []
        for w, a, b in zip(workers, cuts[:-1], cuts[1:]):
            if b <= a:
                continue
            where = None if w is None else [w]
            block = np.ascontiguousarray(shifted[:, a:b])
            wb = np.ones(b - a) if weights is None else np.ascontiguousarray(weights[a:b], dtype=np.float64)
            fut_b, fut_w = client.scatter([block, wb], workers=where, hash=False)
            self.blocks.append((where, fut_b, fut_w))

    def __call__(self, families):
        families = _Packed([[int(m) for m in f] for f in families])
        futures = [
            self.client.submit(_block_tables, b, w, families, self.cards, workers=where, pure=False)
            for where, b, w in self.blocks
        ]
        parts = self.client.gather(futures)
        tables = parts[0]
        for more in parts[1:]:
            tables = [t + u for t, u in zip(tables, more)]
        return tables
