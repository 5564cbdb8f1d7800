"""The streaming reader of :mod:`bnfk_core.stream` on a Dask cluster (the only module importing dask).

What is distributed: reading and parsing the file (``dask.dataframe.read_csv(blocksize=…, dtype=str)``,
or the Parquet row groups), and both passes over its partitions -- per partition the raw-text level
counts (pass 1) and, once the client has fixed the states, the (key, count) pairs of its distinct rows
(pass 2).  The very same chunk functions as the single-process reader run on the workers.

What stays on the client: merging the partitions' results (small: levels, distinct rows), deriving
the states, and everything after -- structure learning and fitting on the weighted distinct rows.
The result is therefore identical to the single-process reader's.

The workers need bnfk installed (the same version) and the file at the same path (a shared file
system, or an ``s3://``/``gs://`` URL their filesystem libraries read).

Connecting is bounded (:func:`connect`): the address is checked first (:func:`check_address`: one sentence for
anything that is not ``tcp://host:port``, ``tls://host:port`` or ``host:port``), then the scheduler must
accept the connection *and* send its first answer (its handshake; a Dask scheduler sends it at once) within
the timeout -- :data:`DEFAULT_TIMEOUT` seconds, or what :func:`timeout_set` (the CLI's ``--dask-timeout``) sets
-- and have a worker within the same time.  A socket that accepts and never answers is refused after the
timeout instead of hanging the run.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import os
import socket
import threading
import time
import urllib.parse

import numpy as np

from .data import _printable
from .errors import BnfkError, DataError, shorten
from .stream import (_Merger, chunk_distinct, chunk_levels, encode_chunk, file_layout, merge_levels,
                     plan_from_levels, weighted_from)

__all__ = ["read_counts_dask", "mean_embedding_dask", "scan_dask", "local_cluster_client", "connect", "check_address",
           "timeout_set", "dask_timeout", "DEFAULT_TIMEOUT", "MAX_TIMEOUT"]

#: seconds to connect to a scheduler, to get its first answer and to see a worker
DEFAULT_TIMEOUT = 30.0
#: the largest timeout that can be set
MAX_TIMEOUT = 3600.0
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
        raise DataError(f"The Dask timeout must be a number of seconds from 0 to {MAX_TIMEOUT:g}, got {seconds!r}.")
    token = _TIMEOUT.set(seconds)
    try:
        yield
    finally:
        _TIMEOUT.reset(token)


def check_address(address) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a scheduler address (``tcp://host:port``, ``tls://host:port``, ``host:port``,
    ``[v6]:port``); a DataError in one sentence, the address cut to ~80 characters, for anything else."""
    if not isinstance(address, str):
        raise DataError(f"The Dask scheduler address must be text; {_ADDRESS_FORM}.")
    shown = shorten(_printable(address))
    text = address.strip()
    if not text:
        raise DataError(f"The Dask scheduler address is empty; {_ADDRESS_FORM}, or leave it out for a local cluster.")
    bad = f"The Dask scheduler address '{shown}' is not usable"
    if len(text) > 300 or any(c.isspace() or not c.isprintable() for c in text):
        raise DataError(f"{bad}; {_ADDRESS_FORM}.")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    scheme = scheme.lower()
    if scheme not in _SCHEMES:
        raise DataError(f"{bad}: bnfk connects over {' or '.join(_SCHEMES)}, not '{shorten(scheme, 20)}'; {_ADDRESS_FORM}.")
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
    """Connect to ``host:port`` and (plain tcp) wait for the scheduler's first bytes, each within ``timeout``."""
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
        except (socket.timeout, TimeoutError):
            raise DataError(f"Cannot reach {where}: no connection within {timeout:g} s (use --dask-timeout "
                            "to wait longer).") from None
        except OSError as err:
            raise DataError(f"Cannot reach {where}: {(err.strerror or 'connection failed').lower()}.") from None
        if scheme == "tcp":
            try:
                first = sock.recv(1)
            except (socket.timeout, TimeoutError):
                raise DataError(f"{where[0].upper()}{where[1:]} accepted the connection but did not answer within "
                                f"{timeout:g} s; is it a Dask scheduler? (--dask-timeout waits longer).") from None
            except OSError as err:
                raise DataError(f"Cannot reach {where}: {(err.strerror or 'connection reset').lower()}.") from None
            if not first:
                raise DataError(f"{where[0].upper()}{where[1:]} closed the connection without answering; is it a "
                                "Dask scheduler?")
    finally:
        sock.close()


def _client(address: str, timeout: float):
    """A ``distributed.Client`` connected to ``address`` with a worker, all within ``timeout`` seconds."""
    from distributed import Client
    scheme, host, port = check_address(address)
    shown = shorten(_printable(address.strip()))
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
        raise DataError(f"The Dask scheduler at {shown} did not finish connecting within {2 * timeout + 5:g} s.")
    if isinstance(exc, TimeoutError):  # asyncio's too (Python >= 3.11)
        raise DataError(f"The Dask scheduler at {shown} has no worker after {timeout:g} s; start one "
                        f"(dask worker {shown}) or use a local cluster.") from None
    if exc is not None:
        raise DataError(f"Cannot use the Dask scheduler at {shown}: {shorten(str(exc) or type(exc).__name__)}.") \
            from None
    return client



def local_cluster_client(n_workers: int = 2):
    """A ``distributed.Client`` on a new local cluster of processes (one thread each)."""
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=int(n_workers), threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster)


@contextlib.contextmanager
def connect(scheduler: str | None = None, client=None, timeout: float | None = None):
    """The Dask client to use: ``client`` if given, else one connected to ``scheduler`` (an address such as
    ``tcp://10.0.0.5:8786``; checked, and bounded by ``timeout`` seconds, default :func:`dask_timeout`: see the
    module docstring), else one on a new local cluster of two processes; the ones opened here are closed again
    on exit."""
    if client is not None:
        yield client
        return
    try:
        from distributed import Client
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
        raise DataError(f"The Dask cluster at {shorten(_printable(scheduler.strip()))} could not run bnfk's tasks "
                        f"({type(exc).__name__}: {shorten(str(exc), 120)}); its scheduler and workers need the same "
                        "Python packages and bnfk version as this process.") from None
    finally:
        cluster = getattr(own, "cluster", None)
        own.close()
        if cluster is not None and scheduler is None:
            cluster.close()


def _partitions(layout, blocksize, chunksize):
    """The file as a list of delayed frames of raw cell text."""
    import dask.dataframe as dd
    if layout.fmt == "parquet":
        ddf = dd.read_parquet(layout.path, split_row_groups=True)
        import pandas as pd

        def as_text(df):
            out = pd.DataFrame({h: df[c].astype(object).where(df[c].notna(), "").astype(str).to_numpy(dtype=object)
                                for h, c in zip(layout.header, df.columns)})
            return out
        return [d for d in ddf.to_delayed()], as_text
    ddf = dd.read_csv(layout.path, sep=layout.delimiter, dtype=str, keep_default_na=False, na_filter=False,
                      header=0, names=list(layout.header), blocksize=blocksize, encoding=layout.encoding,
                      skip_blank_lines=True)
    return list(ddf.to_delayed()), None


def _levels_of(df, columns, as_text):
    if as_text is not None:
        df = as_text(df)
    return len(df), chunk_levels(df, columns, 0)


def _distinct_of(df, plan, as_text):
    if as_text is not None:
        df = as_text(df)
    return len(df), chunk_distinct(df, plan)


def read_counts_dask(path, *, class_column=None, missing_policy="missing", discretize_bins=4, max_levels=50,
                     drop_columns=(), model=None, fmt=None, source=None, scheduler: str | None = None,
                     client=None, blocksize="64MB", chunksize=None):
    """:func:`bnfk_core.stream.read_counts` with both passes on Dask partitions (module docstring).

    ``client``: a ``distributed.Client``; else ``scheduler`` (an address such as
    ``tcp://10.0.0.5:8786``) is connected to; else a local cluster of two processes is started and
    closed again.  ``blocksize``: bytes of CSV per partition.  Line numbers in messages about
    unknown values are not available (a partition does not know its first row).
    """
    try:
        import dask
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise DataError("The dask engine needs dask[distributed]; pip install 'dask[distributed]'.") from exc
    layout = file_layout(path, fmt)
    with connect(scheduler, client) as client:
        parts, as_text = _partitions(layout, blocksize, chunksize)
        first = [dask.delayed(_levels_of)(p, layout.header, as_text) for p in parts]
        results = client.compute(first, sync=True)
        n_rows = sum(r[0] for r in results)
        if n_rows == 0:
            raise DataError(f"{_printable(str(path))} has a header but no data rows.")
        levels = merge_levels(r[1] for r in results)
        src = source if source is not None else os.path.basename(layout.path)
        plan = plan_from_levels(levels, layout, class_column=class_column, missing_policy=missing_policy,
                                discretize_bins=discretize_bins, max_levels=max_levels, drop_columns=drop_columns,
                                model=model, source=src)
        plan_future = client.scatter(plan, broadcast=True)
        second = [dask.delayed(_distinct_of)(p, plan_future, as_text) for p in parts]
        merger, n = _Merger(), 0
        for fut in client.compute(second):
            rows, part = fut.result()
            n += rows
            merger.add(part)
        keys, counts = merger.result()
    data = weighted_from(plan, keys, np.asarray(counts), n)
    return data


def _plan_dask(client, path, layout, model, options, source=None):
    """Pass 1 on the partitions (raw-text level counts), merged on the client into the codecs of ``model``."""
    import dask
    parts, as_text = _partitions(layout, options.pop("blocksize", "64MB"), None)
    results = client.compute([dask.delayed(_levels_of)(p, layout.header, as_text) for p in parts], sync=True)
    if sum(r[0] for r in results) == 0:
        raise DataError(f"{_printable(str(path))} has a header but no data rows.")
    src = source if source is not None else os.path.basename(layout.path)
    plan = plan_from_levels(merge_levels(r[1] for r in results), layout, model=model, source=src, **options)
    return parts, as_text, plan


def _scan_of(df, plan, tables, as_text, keep_candidates):
    """One partition's part of a pass over the rows (:func:`bnfk_core.rowwise.scan_chunk`, rows from 0)."""
    from .rowwise import scan_chunk
    if as_text is not None:
        df = as_text(df)
    return scan_chunk(tables, encode_chunk(df, plan, np.int64), 0, keep_candidates)


def scan_dask(model, path, *, tables=None, keep_candidates: bool = False, fmt=None, source=None,
              scheduler: str | None = None, client=None, blocksize="64MB", **options):
    """:func:`bnfk_core.rowwise` 's pass over a file with both passes on Dask partitions: pass 1 level counts
    (the client fixes the codecs from the model), pass 2 each partition's expected family counts, category
    counts and (``keep_candidates``) complete rows' cell indices; the client adds the parts up in file order
    and numbers the rows.  Returns ``(pass, plan)``.  Equal to the single-process pass up to the order of the
    floating-point sums (~1e-15 relative); the row numbers in messages about a row count from its partition."""
    import dask

    from .rowwise import CellTables, merge_scans
    t0 = time.perf_counter()
    tables = CellTables(model) if tables is None else tables
    layout = file_layout(path, fmt)
    with connect(scheduler, client) as client:
        parts, as_text, plan = _plan_dask(client, path, layout, model, dict(options, blocksize=blocksize), source)
        plan_f, tables_f = client.scatter(plan, broadcast=True), client.scatter(tables, broadcast=True)
        futures = client.compute([dask.delayed(_scan_of)(p, plan_f, tables_f, as_text, keep_candidates)
                                  for p in parts])
        scan = merge_scans(tables, (f.result() for f in futures), shift_rows=True)
    scan.seconds = time.perf_counter() - t0
    return scan, plan


def mean_embedding_dask(model, path, *, tables=None, scheduler: str | None = None, client=None,
                        blocksize="64MB", **options) -> tuple[np.ndarray, int]:
    """(mean phi over the rows of ``path``, rows) -- :func:`bnfk_core.rowwise.mean_embedding` on Dask
    partitions (:func:`scan_dask`)."""
    scan, _ = scan_dask(model, path, tables=tables, scheduler=scheduler, client=client, blocksize=blocksize,
                        **options)
    return scan.phi_total / scan.n_rows, scan.n_rows
