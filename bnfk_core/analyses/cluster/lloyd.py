"""Kernel k-means in the explicit feature space, one pass over blocks of rows at a time, on a runner.

The algorithm is scikit-learn's ``KMeans(init="k-means++", algorithm="lloyd")`` (seeded greedy k-means++
starts with ``2 + int(log k)`` candidates a centre, Lloyd's iterations, empty clusters moved to the rows
farthest from their centres, the start with the lowest within-cluster sum of squares kept), written as passes
over fixed blocks of :data:`BLOCK_ROWS` rows of the features Phi (K = Phi Phi^T, :mod:`.features`):

* every Lloyd iteration is one pass: each block assigns its rows to the nearest centre
  (||phi(x)||^2 - 2 phi(x).mu_c + ||mu_c||^2) and returns its labels, its per-cluster sums of Phi and counts,
  its share of the cost and its rows farthest from their centres; the client adds the blocks' sums, in block
  order, into the new centres;
* every k-means++ centre takes two passes: the blocks holding the sampled candidates return those rows, then
  every block returns each candidate's potential (the sum of min(D(x)^2, ||phi(x) - candidate||^2) over its
  rows); the client adds them in block order and keeps the best candidate, whose distances the blocks keep.

The blocks are the same whoever runs them, and every sum over blocks is made on the client in block order, so
one process (a group holding every block) and a Dask cluster (a group of contiguous blocks on each worker,
features made there from the rows' codes: :func:`groups_from_data`) give the same floats, hence the same
labels and cost.  A group is kept where it runs between passes (:class:`Here` in this process; :class:`Pinned`
on the worker a Dask runner's client gave it); each pass makes a new group from the old one (the blocks'
arrays shared), so nothing is changed in place.

Each block's products run on one BLAS thread (:class:`threadpoolctl.ThreadpoolController`), as scikit-learn's
``KMeans`` ran here before.

References
----------
D. Arthur and S. Vassilvitskii, "k-means++: the advantages of careful seeding", SODA 2007 (the greedy variant
with several candidates a centre is scikit-learn's); kernel k-means on the explicit Fisher features:
:mod:`.features` (the bnfk paper, Theorem 1: K = Phi Phi^T).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from threadpoolctl import ThreadpoolController

__all__ = [
    "BLOCK_ROWS",
    "CHUNK_ROWS",
    "kmeans_plusplus",
    "blocked_kmeans",
    "groups_from_phi",
    "groups_from_data",
    "kept_runner",
]

#: rows of one block of a pass (fixed: the blocks, hence the sums' order, do not depend on the runner)
BLOCK_ROWS = 32_768
#: rows of a dense block assigned and summed at a time (:func:`_lloyd_dense`: they stay in the cache between
#: the product with the centres and the sums, as scikit-learn's chunks of 256 rows)
CHUNK_ROWS = 256


class Here:
    """The runner of one process for kept groups: ``keep`` and ``map_kept`` run the function here."""

    name = "local"

    def keep(self, fn, items, args=()):
        return [fn(item, *args) for item in items]

    def map_kept(self, fn, kept, args=()):
        return [fn(k, *args) for k in kept]


HERE = Here()


class Pinned:
    """A Dask runner's client for kept groups: the i-th new item goes to the i-th worker (sorted by address),
    a pass over a kept group runs on the worker holding it, and the (small) arguments travel with the tasks --
    a pass is one round trip, without :meth:`~bnfk_core.data.dask_runner.DaskRunner.map_kept`'s broadcast of
    its arguments to every worker."""

    name = "dask"

    def __init__(self, client):
        self.client = client
        self.workers = sorted(client.scheduler_info().get("workers", {})) or [None]
        self.where: dict = {}

    def _submit(self, fn, item, args, w):
        fut = self.client.submit(fn, item, *args, pure=False, workers=None if w is None else [w])
        self.where[fut.key] = w
        return fut

    def keep(self, fn, items, args=()):
        out = []
        for i, item in enumerate(items):
            w = self.where.get(getattr(item, "key", None), self.workers[i % len(self.workers)])
            out.append(self._submit(fn, item, args, w))
        return out

    def map_kept(self, fn, kept, args=()):
        futs = [self._submit(fn, k, args, self.where.get(k.key)) for k in kept]
        out = self.client.gather(futs)
        for f in futs:
            self.where.pop(f.key, None)
        return out


def kept_runner(runner):
    """The runner of the kept groups: :data:`HERE` for None or a runner without a client, else
    :class:`Pinned`."""
    client = getattr(runner, "client", None)
    return HERE if client is None else Pinned(client)


_CONTROLLER: list = []


def _one_thread():
    """BLAS on one thread for the block (the controller found once per process: finding it costs
    milliseconds)."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


class _Group:
    """Contiguous blocks of feature rows (``blocks``: dense arrays or CSR matrices), their first global row
    ``row0``, their rows' squared norms ``sq`` and (between passes of a k-means++ start) ``closest``: each
    row's squared distance to its nearest centre so far, ``cand``: the candidates' distances; ``step``: rows a
    block."""

    def __init__(self, row0, blocks, sq, step, closest=None, cand=None):
        self.row0, self.blocks, self.sq, self.step, self.closest, self.cand = (
            row0,
            blocks,
            sq,
            step,
            closest,
            cand,
        )

    def like(self, **changes):
        out = _Group(self.row0, self.blocks, self.sq, self.step, self.closest, self.cand)
        out.__dict__.update(changes)
        return out


def _as_blocks(Phi, step: int) -> list:
    Phi = sp.csr_matrix(Phi, dtype=np.float64)
    return [Phi[a : a + step] for a in range(0, Phi.shape[0], step)]


def _sq(B) -> np.ndarray:
    if sp.issparse(B):
        return np.asarray(B.multiply(B).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", B, B)


def group_part(item, step: int) -> _Group:
    """``(row0, Phi rows)`` as a kept group of CSR blocks of ``step`` rows (``row0`` a multiple of
    ``step``)."""
    row0, Phi = item
    blocks = _as_blocks(Phi, step)
    return _Group(int(row0), blocks, [_sq(B) for B in blocks], int(step))


def features_group_part(item, featurize, step: int) -> _Group:
    """``(row0, rows as CategoricalData)``: their features (``featurize(rows)``, a sparse Phi) as a group."""
    row0, data = item
    return group_part((row0, featurize(data)), step)


def dense_part(g: _Group) -> _Group:
    """The group with its blocks as dense arrays (the same numbers; the norms summed as scikit-learn's
    ``row_norms`` sums a dense row)."""
    blocks = [np.ascontiguousarray(B.toarray()) for B in g.blocks]
    return g.like(blocks=blocks, sq=[_sq(B) for B in blocks])


def _cuts(n: int, parts: int, step: int) -> list[tuple[int, int]]:
    """At most ``parts`` contiguous ranges of rows covering 0..n, cut at multiples of ``step``."""
    nb = max(1, -(-n // step))
    parts = max(1, min(int(parts), nb))
    bounds = np.linspace(0, nb, parts + 1).round().astype(int)
    return [(int(a) * step, min(int(b) * step, n)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _parts_of(runner) -> int:
    """Groups a runner takes: one here, one per worker of a Dask client."""
    return len(getattr(runner, "workers", ())) or 1


def groups_from_phi(Phi, runner=HERE, block_rows: int | None = None) -> list:
    """The rows of ``Phi`` kept on ``runner`` as groups of blocks of ``block_rows`` rows (default
    :data:`BLOCK_ROWS`)."""
    block_rows = BLOCK_ROWS if block_rows is None else block_rows
    Phi = sp.csr_matrix(Phi, dtype=np.float64)
    items = [(a, Phi[a:b]) for a, b in _cuts(Phi.shape[0], _parts_of(runner), int(block_rows))]
    return runner.keep(group_part, items, (int(block_rows),))


def groups_from_data(featurize, data, runner=HERE, block_rows: int | None = None) -> list:
    """The features of the rows of ``data`` (``featurize(rows)``: e.g. :func:`.features.feature_map` of a
    fitted kernel, bound with :func:`functools.partial`) made and kept on ``runner``'s workers as groups of
    blocks of ``block_rows`` rows (default :data:`BLOCK_ROWS`): only the rows' codes travel."""
    block_rows = BLOCK_ROWS if block_rows is None else block_rows
    items = [
        (a, data.subset(np.arange(a, b))) for a, b in _cuts(data.n_rows, _parts_of(runner), int(block_rows))
    ]
    return runner.keep(features_group_part, items, (featurize, int(block_rows)))


# ---------------------------------------------------------------------------------------- passes on a group
def stats_part(g: _Group) -> list:
    """Per block: (rows, non-zeros, column sums, column sums of squares)."""
    out = []
    for B in g.blocks:
        if sp.issparse(B):
            out.append(
                (
                    B.shape[0],
                    int(B.nnz),
                    np.asarray(B.sum(axis=0)).ravel(),
                    np.asarray(B.multiply(B).sum(axis=0)).ravel(),
                )
            )
        else:
            out.append((B.shape[0], int(np.count_nonzero(B)), B.sum(axis=0), (B * B).sum(axis=0)))
    return out


def rows_part(g: _Group, picks: dict) -> dict:
    """The feature rows ``picks`` asks of this group's blocks: ``{global block: [("row", r) | ("pot", p)]}``,
    a global row, or the row where the running sum of ``closest`` in that block passes ``p`` (k-means++'s
    draw). Returns ``{(block, i): (global row, dense row)}``."""
    out = {}
    first = g.row0 // g.step
    for j, B in enumerate(g.blocks):
        asks = picks.get(first + j)
        if not asks:
            continue
        cum = None
        for i, (kind, value) in enumerate(asks):
            if kind == "row":
                r = int(value) - g.row0 - j * g.step
            else:
                if cum is None:
                    cum = np.cumsum(g.closest[j])
                r = min(int(np.searchsorted(cum, value)), B.shape[0] - 1)
            row = B[r].toarray().ravel() if sp.issparse(B) else np.array(B[r])
            out[(first + j, i)] = (g.row0 + j * g.step + r, row)
    return out


def _cross(B, C) -> np.ndarray:
    """C B^T: (len(C), rows), B dense or CSR."""
    if sp.issparse(B):
        return np.asarray((B @ C.T).T)
    return C @ B.T


def _d2(B, sq, C) -> np.ndarray:
    """Squared distances of the rows of ``C`` to the rows of ``B`` (norms ``sq``): (len(C), rows), at least
    0."""
    D = _cross(B, C)
    D *= -2.0
    D += np.einsum("ij,ij->i", C, C)[:, None]
    D += sq[None, :]
    return np.maximum(D, 0.0, out=D)


def first_part(g: _Group, c) -> _Group:
    """k-means++'s first centre ``c``: every row's squared distance to it kept."""
    C = np.asarray(c, dtype=np.float64)[None, :]
    with _one_thread():
        closest = [_d2(B, s, C)[0] for B, s in zip(g.blocks, g.sq)]
    return g.like(closest=closest, cand=None)


def pots_part(g: _Group) -> list:
    """Per block: the sum of ``closest`` (a dot product with ones, as scikit-learn's potential)."""
    return [float(c @ np.ones(len(c))) for c in g.closest]


def candidates_part(g: _Group, C) -> _Group:
    """Each row's distance to its nearest centre were each candidate (a row of ``C``) added, kept."""
    with _one_thread():
        cand = [np.minimum(_d2(B, s, C), c[None, :]) for B, s, c in zip(g.blocks, g.sq, g.closest)]
    return g.like(cand=cand)


def cand_pots_part(g: _Group) -> list:
    """Per block: each candidate's potential (row sums of ``cand``, a product with ones as scikit-learn's)."""
    with _one_thread():
        return [(m @ np.ones((m.shape[1], 1))).ravel() for m in g.cand]


def choose_part(g: _Group, best: int) -> _Group:
    """The candidate ``best`` added: its distances become ``closest``."""
    return g.like(closest=[np.ascontiguousarray(m[best]) for m in g.cand], cand=None)


def _assign(B, s, C, cc):
    """Each row's nearest centre and its squared distance to it."""
    D = _cross(B, C)
    D *= -2.0
    D += cc[:, None]
    lab = np.argmin(D, axis=0)
    d = np.maximum(D[lab, np.arange(D.shape[1])] + s, 0.0)
    return lab, d


@numba.njit(cache=True, nogil=True)
def _lloyd_dense(B, sq, CT, cc, step, sums):  # pragma: no cover - compiled
    """Every row of the dense block ``B`` to its nearest centre (the columns of ``CT``, squared norms ``cc``),
    ``step`` rows at a time: (labels, squared distances, per-cluster sums of the rows if ``sums``, counts)."""
    n, d = B.shape
    k = CT.shape[1]
    S = np.zeros((k, d))
    counts = np.zeros(k, dtype=np.int64)
    lab = np.empty(n, dtype=np.int64)
    dist = np.empty(n)
    for a in range(0, n, step):
        b = min(a + step, n)
        P = np.dot(np.ascontiguousarray(B[a:b]), CT)
        for i in range(b - a):
            r = a + i
            best = 0
            bv = -2.0 * P[i, 0] + cc[0]
            for c in range(1, k):
                v = -2.0 * P[i, c] + cc[c]
                if v < bv:
                    bv = v
                    best = c
            lab[r] = best
            dv = bv + sq[r]
            dist[r] = dv if dv > 0.0 else 0.0
            counts[best] += 1
            if sums:
                for j in range(d):
                    S[best, j] += B[r, j]
    return lab, dist, S, counts


def _assign_block(B, s, C, cc, sums: bool):
    """(labels, squared distances to them, per-cluster sums of the rows or None, counts) of one block."""
    k = C.shape[0]
    if not sp.issparse(B):
        lab, d, S, counts = _lloyd_dense(B, s, np.ascontiguousarray(C.T), cc, CHUNK_ROWS, sums)
        return lab, d, (S if sums else None), counts
    lab, d = _assign(B, s, C, cc)
    counts = np.bincount(lab, minlength=k)
    if not sums:
        return lab, d, None, counts
    n = len(lab)
    H = sp.csr_matrix((np.ones(n), (lab, np.arange(n))), shape=(k, n))
    return lab, d, np.asarray((H @ B).toarray()), counts


def lloyd_part(g: _Group, C, top: int) -> list:
    """One Lloyd pass over the group's blocks with centres ``C``: per block (labels, sums of Phi per cluster,
    counts, cost, the ``top`` rows farthest from their centres as (distance, global row))."""
    k = C.shape[0]
    cc = np.einsum("ij,ij->i", C, C)
    out = []
    with _one_thread():
        for j, (B, s) in enumerate(zip(g.blocks, g.sq)):
            lab, d, S, counts = _assign_block(B, s, C, cc, True)
            n = len(lab)
            t = min(int(top), n)
            far = np.argpartition(-d, t - 1)[:t] if 0 < t < n else np.arange(n)[:t]
            row0 = g.row0 + j * g.step
            out.append(
                (
                    lab.astype(np.int16 if k < 2**15 else np.int32),
                    S,
                    counts,
                    float(d.sum()),
                    [(float(d[i]), row0 + int(i)) for i in far],
                )
            )
    return out


def labels_part(g: _Group, C) -> list:
    """The labels and cost of every block with centres ``C`` (no sums)."""
    cc = np.einsum("ij,ij->i", C, C)
    out = []
    with _one_thread():
        for B, s in zip(g.blocks, g.sq):
            lab, d, _, _ = _assign_block(B, s, C, cc, False)
            out.append((lab.astype(np.int32), float(d.sum())))
    return out


# ---------------------------------------------------------------------------------------- the client
def _flat(parts: list) -> list:
    return [x for p in parts for x in p]


def _fetch(runner, groups, picks: dict) -> dict:
    got = {}
    for part in runner.map_kept(rows_part, groups, (picks,)):
        got.update(part)
    return got


def kmeans_plusplus(
    groups, n: int, k: int, rng: np.random.RandomState, *, runner=HERE, block_rows: int | None = None
):
    """scikit-learn's greedy k-means++ (:func:`sklearn.cluster.kmeans_plusplus`, ``2 + int(log k)`` candidates
    a centre) over the kept ``groups`` of ``n`` rows, drawing from ``rng``: (centres (k, D), their rows, the
    groups with every row's distance to its nearest centre).  Over one block its draws and sums are
    scikit-learn's:
    the same rows."""
    step = BLOCK_ROWS if block_rows is None else int(block_rows)
    trials = 2 + int(np.log(k))
    first = int(rng.choice(n, p=np.ones(n) / n))
    ((_, c0),) = _fetch(runner, groups, _row_picks([first], step)).values()
    centres, rows = [c0], [first]
    groups = runner.keep(first_part, groups, (c0,))
    pots = np.array(_flat(runner.map_kept(pots_part, groups)))
    current = 0.0
    for p in pots:  # the blocks' potentials added in block order
        current += p
    for _ in range(1, k):
        draws = rng.uniform(size=trials) * current
        cum = np.cumsum(pots)
        picks: dict = {}
        where = []
        for r in draws:
            b = min(int(np.searchsorted(cum, r)), len(pots) - 1)
            rest = r - (cum[b - 1] if b > 0 else 0.0)
            picks.setdefault(b, []).append(("pot", rest))
            where.append((b, len(picks[b]) - 1))
        got = _fetch(runner, groups, picks)
        C = np.vstack([got[w][1] for w in where])
        groups = runner.keep(candidates_part, groups, (C,))
        per_block = _flat(runner.map_kept(cand_pots_part, groups))
        totals = np.zeros(trials)
        for p in per_block:
            totals = totals + p
        best = int(np.argmin(totals))
        current = float(totals[best])
        pots = np.array([float(p[best]) for p in per_block])
        groups = runner.keep(choose_part, groups, (best,))
        centres.append(C[best])
        rows.append(got[where[best]][0])
    return np.vstack(centres), np.array(rows, dtype=np.int64), groups


def _lloyd(runner, groups, C, n: int, k: int, max_iter: int, tol: float, step: int):
    """Lloyd's iterations from centres ``C``: (labels, cost, iterations)."""
    labels_old = None
    strict = False
    for it in range(int(max_iter)):
        parts = _flat(runner.map_kept(lloyd_part, groups, (C, k)))
        labels = np.concatenate([p[0] for p in parts]).astype(np.int64)
        S = np.zeros_like(C)
        counts = np.zeros(k, dtype=np.int64)
        for p in parts:  # in block order
            S += p[1]
            counts += p[2]
        empty = np.flatnonzero(counts == 0)
        if len(empty):  # scikit-learn's relocation: the rows farthest from their centres become the centres
            far = sorted((c for p in parts for c in p[4]), key=lambda t: (-t[0], t[1]))[: len(empty)]
            rows = [r for _, r in far]
            got = _fetch(runner, groups, _row_picks(rows, step))
            vec = {g[0]: g[1] for g in got.values()}
            for c, r in zip(empty, rows):
                old = labels[r]
                S[old] -= vec[r]
                counts[old] -= 1
                S[c] = vec[r]
                counts[c] = 1
        C_new = S / np.maximum(counts, 1)[:, None]
        if labels_old is not None and np.array_equal(labels, labels_old):
            strict = True
            C = C_new
            break
        shift = float(((C_new - C) ** 2).sum())
        C = C_new
        labels_old = labels
        if shift <= tol:
            break
    parts = _flat(runner.map_kept(labels_part, groups, (C,)))
    labels = np.concatenate([p[0] for p in parts]).astype(np.int64)
    cost = 0.0
    for p in parts:
        cost += p[1]
    return labels, cost, it + 1, strict


def _row_picks(rows, step: int) -> dict:
    picks: dict = {}
    for r in rows:
        picks.setdefault(int(r) // step, []).append(("row", int(r)))
    return picks


def blocked_kmeans(
    groups,
    n: int,
    n_clusters: int,
    *,
    runner=HERE,
    seed: int = 0,
    n_init: int = 3,
    max_iter: int = 300,
    tol: float = 1e-4,
    dense=None,
    block_rows: int | None = None,
) -> tuple[np.ndarray, float, dict]:
    """Kernel k-means over the kept ``groups`` of ``n`` feature rows (module docstring): (labels, cost, info)
    of the best of ``n_init`` seeded k-means++ starts; ``info``: the features' ``nnz`` and ``columns``,
    whether the blocks were ``dense``, each start's ``iterations``.  ``block_rows``: the groups' rows a block.

    ``dense(rows, columns, non-zeros) -> bool`` (or a bool) decides whether the blocks become dense arrays
    (:func:`.features.dense_layout`'s rule); ``tol`` is relative to the features' mean variance, as
    scikit-learn's: Lloyd stops when the labels do not change or the centres move by at most
    ``tol * mean(var(Phi, axis=0))`` (squared, summed).
    """
    block_rows = BLOCK_ROWS if block_rows is None else block_rows
    stats = _flat(runner.map_kept(stats_part, groups))
    d = len(stats[0][2]) if stats else 0
    nnz = sum(s[1] for s in stats)
    if callable(dense):
        dense = dense(n, d, nnz)
    info = {"nnz": int(nnz), "columns": int(d), "dense": bool(dense), "iterations": []}
    if dense:
        groups = runner.keep(dense_part, groups)
    total = np.zeros_like(stats[0][2])
    total_sq = np.zeros_like(stats[0][3])
    for s in stats:
        total += s[2]
        total_sq += s[3]
    var = np.maximum(total_sq / n - (total / n) ** 2, 0.0)
    tol_scaled = float(tol) * float(var.mean()) if var.size else 0.0
    rng = np.random.RandomState(int(seed))  # one stream for every start, as scikit-learn's KMeans
    best = None
    for _ in range(int(n_init)):
        C, _, kept = kmeans_plusplus(groups, n, int(n_clusters), rng, runner=runner, block_rows=block_rows)
        labels, cost, iterations, _ = _lloyd(
            runner, groups, C, n, int(n_clusters), max_iter, tol_scaled, int(block_rows)
        )
        info["iterations"].append(int(iterations))
        if best is None or cost < best[1]:
            best = (labels, cost)
        del kept
    return best[0], best[1], info
