"""Pure helpers behind the app's figures: DAG layouts, row orderings, embeddings.

Nothing here draws: every function returns plain numbers (coordinates, index orders,
arrays), so figures can be rebuilt and checked outside Streamlit and plotly.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
from scipy.cluster.hierarchy import leaves_list, linkage
from scipy.spatial.distance import squareform

__all__ = ["layered_layout", "arrow_segment", "sample_rows", "kernel_distance", "cluster_order",
           "class_order", "kernel_pca", "pair_values", "column_summary"]


# ---------------------------------------------------------------------- DAG layout
def _layers(nodes: Sequence[str], arcs: Iterable[tuple[str, str]]) -> dict[str, int]:
    """Longest-path layering: a node sits one layer below its deepest parent."""
    parents = {v: [] for v in nodes}
    children = {v: [] for v in nodes}
    for u, v in arcs:
        parents[v].append(u)
        children[u].append(v)
    layer: dict[str, int] = {}
    indeg = {v: len(parents[v]) for v in nodes}
    frontier = [v for v in nodes if indeg[v] == 0]
    for v in frontier:
        layer[v] = 0
    while frontier:
        nxt = []
        for u in frontier:
            for w in children[u]:
                layer[w] = max(layer.get(w, 0), layer[u] + 1)
                indeg[w] -= 1
                if indeg[w] == 0:
                    nxt.append(w)
        frontier = nxt
    if len(layer) != len(nodes):
        raise ValueError("layered_layout needs an acyclic graph.")
    return layer


def layered_layout(nodes: Sequence[str], arcs: Iterable[tuple[str, str]], *, max_per_row: int = 7,
                   sweeps: int = 4) -> dict[str, tuple[float, float]]:
    """Top-down coordinates of a DAG: parents above children, few crossings.

    Layers are longest paths from the sources; the order inside each layer follows the
    barycenter heuristic (mean position of the neighbours in the adjacent layers,
    alternating down and up sweeps).  Nodes without any arc are collected in a grid at the
    bottom; layers wider than ``max_per_row`` wrap onto several rows.

    Returns
    -------
    dict
        node -> (x, y) with y = 0 for the top row and decreasing downwards; x is centred on 0
        with unit spacing.
    """
    nodes = [str(v) for v in nodes]
    arcs = [(str(u), str(v)) for u, v in arcs]
    connected = {u for u, _ in arcs} | {v for _, v in arcs}
    linked = [v for v in nodes if v in connected]
    isolated = [v for v in nodes if v not in connected]
    rank = {v: i for i, v in enumerate(nodes)}
    layer = _layers(linked, arcs)
    n_layers = max(layer.values(), default=-1) + 1
    rows = [[v for v in linked if layer[v] == k] for k in range(n_layers)]
    nbrs = {v: set() for v in linked}
    for u, v in arcs:
        nbrs[u].add(v)
        nbrs[v].add(u)
    pos_in_row = {v: float(i) for row in rows for i, v in enumerate(row)}

    def sweep(order):
        for k in order:
            row = rows[k]
            def bary(v):
                ref = [pos_in_row[w] for w in nbrs[v] if abs(layer[w] - k) == 1]
                return (np.mean(ref) if ref else pos_in_row[v], rank[v])
            row.sort(key=bary)
            for i, v in enumerate(row):
                pos_in_row[v] = i - (len(row) - 1) / 2.0
    for s in range(sweeps):
        sweep(range(1, n_layers) if s % 2 == 0 else range(n_layers - 2, -1, -1))

    out: dict[str, tuple[float, float]] = {}
    y = 0.0
    for row in rows + ([isolated] if isolated else []):
        if not row:
            continue
        if row is isolated and linked:
            y -= 0.5  # a little gap before the unconnected nodes
        for start in range(0, len(row), max_per_row):
            chunk = row[start:start + max_per_row]
            offset = 0.5 if (start // max_per_row) % 2 else 0.0  # stagger wrapped rows
            for i, v in enumerate(chunk):
                out[v] = (i - (len(chunk) - 1) / 2.0 + offset, y)
            y -= 1.0
    return out


def arrow_segment(p: Sequence[float], q: Sequence[float], shrink: float) -> tuple[float, float, float, float]:
    """The segment p -> q shortened by ``shrink`` at both ends (so arrows stop at node borders)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    d = q - p
    L = float(np.hypot(*d))
    if L <= 2 * shrink or L == 0:
        return (*p, *q)
    u = d / L
    a, b = p + shrink * u, q - shrink * u
    return float(a[0]), float(a[1]), float(b[0]), float(b[1])


# ---------------------------------------------------------------------- rows and kernels
def sample_rows(n_total: int, n: int, seed: int = 0) -> np.ndarray:
    """Sorted indices of ``min(n, n_total)`` rows drawn without replacement (all rows if n >= n_total)."""
    n_total, n = int(n_total), int(n)
    if n >= n_total:
        return np.arange(n_total)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n_total, size=max(n, 0), replace=False))


def kernel_distance(K: np.ndarray) -> np.ndarray:
    """Feature-space distance d(x, y) = sqrt(K(x,x) + K(y,y) - 2 K(x,y)), clipped at 0."""
    K = np.asarray(K, float)
    d = np.diag(K)
    D2 = d[:, None] + d[None, :] - 2.0 * K
    D2 = 0.5 * (D2 + D2.T)
    np.fill_diagonal(D2, 0.0)
    return np.sqrt(np.clip(D2, 0.0, None))


def cluster_order(K: np.ndarray, method: str = "average") -> np.ndarray:
    """Leaf order of hierarchical clustering (average linkage) on the kernel distance."""
    K = np.asarray(K, float)
    n = K.shape[0]
    if n <= 2:
        return np.arange(n)
    Z = linkage(squareform(kernel_distance(K), checks=False), method=method)
    return np.asarray(leaves_list(Z), dtype=np.int64)


def class_order(labels: Sequence[int], K: np.ndarray | None = None) -> np.ndarray:
    """Rows grouped by class code (missing, -1, last); inside a class, clustered when ``K`` is given."""
    labels = np.asarray(labels)
    keys = np.where(labels < 0, labels.max(initial=0) + 1, labels)
    out = []
    for c in np.unique(keys):
        idx = np.flatnonzero(keys == c)
        if K is not None and len(idx) > 2:
            idx = idx[cluster_order(np.asarray(K)[np.ix_(idx, idx)])]
        out.append(idx)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def kernel_pca(K: np.ndarray, k: int = 2) -> np.ndarray:
    """Rows embedded on the top ``k`` principal axes of the centred kernel matrix (N, k)."""
    K = np.asarray(K, float)
    n = K.shape[0]
    if n == 0:
        return np.zeros((0, k))
    J = np.eye(n) - 1.0 / n
    Kc = J @ K @ J
    Kc = 0.5 * (Kc + Kc.T)
    w, V = np.linalg.eigh(Kc)
    top = np.argsort(w)[::-1][:k]
    Y = V[:, top] * np.sqrt(np.clip(w[top], 0.0, None))
    # deterministic signs: the largest loading of each axis is positive
    signs = np.sign(Y[np.abs(Y).argmax(axis=0), np.arange(Y.shape[1])])
    Y = Y * np.where(signs == 0, 1.0, signs)
    if Y.shape[1] < k:
        Y = np.hstack([Y, np.zeros((n, k - Y.shape[1]))])
    return Y


def pair_values(K: np.ndarray, labels: Sequence[int] | None = None) -> dict:
    """Kernel values of distinct pairs (upper triangle), split by class.

    Returns ``{"all": values}`` and, with labels, ``{"within": {code: values}, "between": values}``.
    """
    K = np.asarray(K, float)
    iu = np.triu_indices(K.shape[0], k=1)
    out = {"all": K[iu]}
    if labels is not None:
        labels = np.asarray(labels)
        a, b = labels[iu[0]], labels[iu[1]]
        same = (a == b) & (a >= 0)
        out["within"] = {int(c): K[iu][same & (a == c)] for c in np.unique(labels[labels >= 0])}
        out["between"] = K[iu][~same]
    return out


# ---------------------------------------------------------------------- tables
def column_summary(data, max_states: int = 8) -> list[dict]:
    """One row per variable of a CategoricalData: levels, counts, missing cells, most frequent level."""
    out = []
    for i, v in enumerate(data.variables):
        col = data.codes[:, i]
        st = data.states[i]
        counts = np.bincount(col[col >= 0], minlength=len(st))
        top = int(counts.argmax()) if counts.sum() else -1
        shown = ", ".join(f"{s} ({c})" for s, c in zip(st[:max_states], counts[:max_states]))
        if len(st) > max_states:
            shown += f", … {len(st) - max_states} more"
        out.append({"variable": v, "role": "class" if v == data.class_column else "feature",
                    "levels": len(st), "counts": shown, "missing": int((col < 0).sum()),
                    "most frequent": f"{st[top]} ({100.0 * counts[top] / max(len(col), 1):.0f}%)" if top >= 0 else "—"})
    return out
