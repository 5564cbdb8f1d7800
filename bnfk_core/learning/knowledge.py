"""Knowledge a structure search must honour: forbidden and required arcs (bnlearn's black and white lists,
pgmpy's ``ExpertKnowledge``).

:func:`parse_arcs` reads the ``A->B, C->D`` text of the CLI and the app; :func:`check_knowledge` checks the
arcs against the data's variables before any counting and returns them as index pairs; :func:`move_mask`
turns them into the legal-move mask of the hill climbs (:mod:`bnfk_core.learning.hill_climb`,
:mod:`bnfk_core.learning.tabu`) and :func:`with_required` puts the required arcs into the graph a climb starts
from.  A forbidden arc ``u -> v`` forbids that direction only (``v -> u`` stays allowed); a required arc is
held in its direction.

References
----------
.. [1] Scutari (2010), "Learning Bayesian networks with the bnlearn R package", J. Stat. Softw. 35(3):
   ``blacklist`` and ``whitelist``.
.. [2] Koller & Friedman (2009), §18.4.3 -- the search operators the constraints restrict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..errors import StructureError, shorten

__all__ = ["parse_arcs", "format_arcs", "check_knowledge", "move_mask", "with_required", "honours"]

#: the separators an arc's text may use between its two variables
ARROWS = ("->", "→")


def parse_arcs(text, what: str = "arcs") -> list[tuple[str, str]]:
    """The arcs of ``text`` (``"A->B, C->D"``; ``→`` also reads as an arrow), or a StructureError naming the
    part that is not an arc.

    Parameters
    ----------
    text : str or sequence of (str, str) or None
        The arcs as text separated by commas, or already as pairs (checked to be pairs).
    what : str
        What the arcs are, for the error (``"--forbid"``).

    Returns
    -------
    list of (str, str)
        The arcs in the order given, repeated arcs once.

    Examples
    --------
    >>> parse_arcs("smoke->lung, bronc -> dysp")
    [('smoke', 'lung'), ('bronc', 'dysp')]
    """
    if text is None:
        return []
    if not isinstance(text, str):
        try:
            arcs = list(text)
        except TypeError:  # a number, say: neither text nor a list of arcs
            raise StructureError(
                f"{what}: {shorten(repr(text))} is neither text such as 'A->B, C->D' nor a list of arcs."
            ) from None
        out = []
        for arc in arcs:
            try:
                pair = None if isinstance(arc, str) else tuple(arc)
            except TypeError:
                pair = None
            if pair is None or len(pair) != 2:
                raise StructureError(
                    f"{what}: {shorten(repr(arc))} is not an arc (a pair of variable names)."
                )
            u, v = (str(a) for a in arc)
            if (u, v) not in out:
                out.append((u, v))
        return out
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        arrow = next((a for a in ARROWS if a in part), None)
        pieces = [p.strip() for p in part.split(arrow)] if arrow else []
        if len(pieces) != 2 or not all(pieces):
            raise StructureError(f"{what}: '{part}' is not an arc; write it as FROM->TO, such as A->B.")
        if tuple(pieces) not in out:
            out.append(tuple(pieces))
    return out


def format_arcs(arcs: Iterable[Sequence[str]]) -> str:
    """``"A->B, C->D"``: the text :func:`parse_arcs` reads back."""
    return ", ".join(f"{u}->{v}" for u, v in arcs)


def check_knowledge(
    variables: Sequence[str],
    forbid=None,
    require=None,
    *,
    max_parents: int | None = None,
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The forbidden and required arcs as index pairs into ``variables``, checked before any work.

    Parameters
    ----------
    variables : sequence of str
        The nodes of the network to learn.
    forbid, require : arcs
        What :func:`parse_arcs` reads (text or pairs of names).
    max_parents : int, optional
        The search's in-degree bound; a node with more required parents is refused.

    Returns
    -------
    (forbid, require) : lists of (int, int)

    Raises
    ------
    StructureError
        One sentence naming the arc: a variable that is not a column, an arc from a node to itself, an arc
        both required and forbidden, required arcs forming a cycle, or more required parents than
        ``max_parents``.
    """
    names = [str(v) for v in variables]
    pos = {v: i for i, v in enumerate(names)}
    out = {}
    for kind, arcs in (("forbidden", forbid), ("required", require)):
        pairs = []
        for u, v in parse_arcs(arcs, f"the {kind} arcs"):
            for end in (u, v):
                if end not in pos:
                    raise StructureError(
                        f"The {kind} arc {u}->{v} names '{end}', which is not a variable of the data."
                    )
            if u == v:
                raise StructureError(f"The {kind} arc {u}->{v} goes from a variable to itself.")
            pairs.append((pos[u], pos[v]))
        out[kind] = pairs
    fb, rq = out["forbidden"], out["required"]
    both = [a for a in rq if a in set(fb)]
    if both:
        u, v = both[0]
        raise StructureError(f"The arc {names[u]}->{names[v]} is both required and forbidden.")
    cycle = _find_cycle(len(names), rq)
    if cycle:
        arcs = ", ".join(f"{names[u]}->{names[v]}" for u, v in cycle)
        raise StructureError(f"The required arcs {arcs} form a cycle; a network has none.")
    if max_parents is not None:
        for v in range(len(names)):
            ps = [names[a] for a, b in rq if b == v]
            if len(ps) > int(max_parents):
                raise StructureError(
                    f"'{names[v]}' has {len(ps)} required parents ({', '.join(ps)}), more than max_parents "
                    f"= {int(max_parents)}."
                )
    return fb, rq


def _find_cycle(n: int, arcs: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The arcs of one directed cycle of the graph ``arcs`` on ``n`` nodes, in order from the first of them in
    ``arcs``; [] when acyclic."""
    children = [[] for _ in range(n)]
    for u, v in arcs:
        children[u].append(v)
    state = [0] * n  # 0 unseen, 1 on the current path, 2 done
    for root in range(n):
        if state[root]:
            continue
        path, stack = [root], [iter(children[root])]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state[nxt] == 1:
                loop = path[path.index(nxt) :] + [nxt]
                cycle = list(zip(loop[:-1], loop[1:], strict=True))
                first = min(range(len(cycle)), key=lambda i: arcs.index(cycle[i]))  # as the arcs were given
                return cycle[first:] + cycle[:first]
            elif state[nxt] == 0:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(children[nxt]))
    return []


def move_mask(n: int, forbid=(), require=()) -> np.ndarray | None:
    """``allowed[k, x, y]``: the constraints let the climb add (k = 0), remove (1) or reverse (2) ``x -> y``;
    None without a constraint.  Adding a forbidden arc, removing a required one, reversing a required arc or
    reversing an arc into a forbidden one are not allowed."""
    if not forbid and not require:
        return None
    fb = np.zeros((n, n), dtype=bool)
    rq = np.zeros((n, n), dtype=bool)
    for u, v in forbid:
        fb[u, v] = True
    for u, v in require:
        rq[u, v] = True
    return np.stack([~fb, ~rq, ~rq & ~fb.T])


def with_required(start, require, n: int):
    """The parents of every node of ``start`` (None: the empty graph) with the ``require`` arcs added; None
    when neither is given.  A StructureError when the union has a cycle (a start graph that contradicts the
    required arcs)."""
    if not require:
        return start
    parents = [set() for _ in range(n)] if start is None else [set(int(p) for p in ps) for ps in start]
    for u, v in require:
        parents[v].add(u)
        parents[u].discard(v)  # a start arc against a required one gives way to it
    arcs = [(p, v) for v, ps in enumerate(parents) for p in ps]
    if _find_cycle(n, arcs):
        raise StructureError("The start graph with the required arcs added has a cycle.")
    return [tuple(sorted(ps)) for ps in parents]


def honours(parents: Sequence[Sequence[int]], forbid=(), require=()) -> bool:
    """True when the graph (parents of every node) holds every required arc and no forbidden one."""
    arcs = {(int(p), v) for v, ps in enumerate(parents) for p in ps}
    return all(a in arcs for a in require) and not any(a in arcs for a in forbid)
