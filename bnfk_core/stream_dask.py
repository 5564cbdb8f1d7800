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
"""
from __future__ import annotations

import contextlib
import os
import time

import numpy as np

from .data import _printable
from .errors import DataError
from .stream import (_Merger, chunk_distinct, chunk_levels, encode_chunk, file_layout, merge_levels,
                     plan_from_levels, weighted_from)

__all__ = ["read_counts_dask", "mean_embedding_dask", "scan_dask", "local_cluster_client", "connect"]


def local_cluster_client(n_workers: int = 2):
    """A ``distributed.Client`` on a new local cluster of processes (one thread each)."""
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=int(n_workers), threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster)


@contextlib.contextmanager
def connect(scheduler: str | None = None, client=None):
    """The Dask client to use: ``client`` if given, else one connected to ``scheduler`` (an address such as
    ``tcp://10.0.0.5:8786``), else one on a new local cluster of two processes; the ones opened here are
    closed again on exit."""
    if client is not None:
        yield client
        return
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise DataError("The dask engine needs dask[distributed]; pip install 'dask[distributed]'.") from exc
    if scheduler:
        try:
            own = Client(scheduler, timeout="30s")
        except (OSError, TimeoutError) as exc:
            raise DataError(f"Cannot reach the Dask scheduler at {_printable(str(scheduler))}: {exc}.") from None
    else:
        own = local_cluster_client()
    try:
        yield own
    finally:
        cluster = getattr(own, "cluster", None)
        own.close()
        if cluster is not None and not scheduler:
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
                     client=None, blocksize="64MB", chunksize=None, na_values=None):
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
                                model=model, source=src, na_values=na_values)
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
