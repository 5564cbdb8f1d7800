"""The current structure and its undo / redo stacks: learned, edited arc by arc, or a segment preset
applied."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections import OrderedDict

import streamlit as st

from bnfk_core.data.table import CategoricalData
from bnfk_core.learning.recipe import DEFAULT_RECIPE, Recipe, learn_recipe
from bnfk_core.network.dag import DAG, SEGMENT_LABELS, apply_segment, segment_pattern
from bnfk_core.network.edit import ArcEdit

from . import hybrid
from .bigfiles import streamed
from .tables import full_data, model_features
from .truth import truth_dag, truth_label

__all__ = [
    "learn_tab_recipe",
    "preset_picks",
    "MAX_UNDO",
    "dag",
    "dag_json",
    "structure_label",
    "recipe",
    "network_line",
    "learn",
    "reset_structure",
    "structure_fingerprint",
    "hybrid_label",
    "set_dag",
    "undo",
    "redo",
    "edit",
    "segment",
]


MAX_UNDO = 50


#: DAGs by (nodes, arcs): a DAG is immutable, and a run asks for the current one many times
_DAGS: dict = {}


def dag() -> DAG:
    """The current structure (one DAG object per distinct structure, shared: a DAG cannot be changed)."""
    d = st.session_state.structure["dag"]
    key = (tuple(d["nodes"]), tuple(tuple(a) for a in d.get("arcs", ())))
    hit = _DAGS.get(key)
    if hit is None:
        hit = DAG.from_dict(d)
        if len(_DAGS) >= 256:
            _DAGS.clear()
        _DAGS[key] = hit
    return hit


def dag_json(d: DAG | None = None) -> str:
    return json.dumps((d or dag()).to_dict(), sort_keys=True)


def structure_label() -> str:
    return st.session_state.structure.get("label", "")


def recipe() -> Recipe:
    """The app's recipe: :data:`~bnfk_core.learning.recipe.DEFAULT_RECIPE` with the Structure page's CPT
    estimator."""
    return DEFAULT_RECIPE.replace(params=st.session_state.get("param_method") or DEFAULT_RECIPE.params)


def network_line(what: str = "This page") -> str:
    """The one line a page shows to say which network drives it (plain text, no Markdown)."""
    d = dag()
    return (
        f"{what} uses the current network of the Structure page: {structure_label()}, {d.n_arcs} arcs, "
        f"CPTs {recipe().params} (recipe: {recipe().describe()})."
    )


#: the networks :func:`learn` learned on this server, shared by its sessions: (data fingerprint, recipe) ->
#: Learned, the least recently used dropped first.  A plain store, not ``st.cache_resource``: that one
#: replays the progress bar a computation drew, which fails once the bar's block is gone (a second click)
_LEARNED: OrderedDict = OrderedDict()
_LEARNED_LOCK = threading.Lock()
MAX_LEARNED = 16


def _recipe_cached(_data: CategoricalData, fingerprint: str, recipe_key: tuple, _progress=None):
    """:func:`~bnfk_core.learning.recipe.learn_recipe` of the current data, once per recipe (``_progress``
    reports a computation; a stored network comes back at once)."""
    key = (fingerprint, recipe_key)
    with _LEARNED_LOCK:
        hit = _LEARNED.get(key)
        if hit is not None:
            _LEARNED.move_to_end(key)
            return hit
    out = learn_recipe(_data, Recipe(**dict(recipe_key)), progress=_progress)
    with _LEARNED_LOCK:
        _LEARNED[key] = out
        while len(_LEARNED) > MAX_LEARNED:
            _LEARNED.popitem(last=False)
    return out


def learn(
    method: str,
    score: str = "bic",
    k: int = 2,
    max_parents: int | None = None,
    seed: int = 0,
    progress=None,
    forbid=(),
    require=(),
):
    """The network the session's recipe (:func:`recipe`) learns with the Learn tab's search (``method``,
    ``score``, ``k``, ``max_parents``, ``seed``, the ``forbid`` and ``require`` arcs of its knowledge
    controls) from the current data: its missing-data method keeps the
    rows it keeps (structural EM on all rows by default), and the result's ``note`` says how.  A large file's
    distinct rows with counts are searched on their complete rows (structural EM is the CLI's job there).
    Cached per recipe: the Learn button with the first network's options gives that very network.

    Returns
    -------
    bnfk_core.learning.recipe.Learned
    """
    d = full_data()
    key = learn_tab_recipe(method, score, k, max_parents, seed, forbid, require)
    return _recipe_cached(d, d.fingerprint(), key, progress)


def learn_tab_recipe(method: str, score: str, k: int, max_parents, seed: int, forbid=(), require=()) -> tuple:
    """The session's recipe with the Learn tab's search, checked, as a hashable key (``Recipe(**dict(key))``
    rebuilds it); a large file's distinct rows are searched on their complete rows."""
    r = dataclasses.replace(
        recipe(),
        structure=method,
        score=score,
        k=int(k),
        max_parents=max_parents,
        seed=int(seed),
        forbid=tuple(forbid),
        require=tuple(require),
    )
    if streamed() is not None:
        r = dataclasses.replace(r, missing_data="complete-rows")
    return tuple(sorted(r.check().to_dict().items()))


def reset_structure() -> None:
    """The default recipe's network (:data:`~bnfk_core.learning.recipe.DEFAULT_RECIPE`: a Chow–Liu tree on
    BIC) for the current features, learned by :func:`~bnfk_core.learning.recipe.learn_recipe` as the CLI's
    ``learn DATA.csv`` and Python learn it -- or, for rows sampled from a textbook network, that network's
    own DAG (:func:`.truth.truth_dag`: the network a lecture starts from and compares with); clears the undo
    stack."""
    ss = st.session_state
    true = truth_dag()
    if true is not None:  # rows sampled from a textbook network: its own DAG first (Reset goes back to it)
        start, label, learned, notes = true, truth_label(), truth_label(), []
    elif hybrid.on() and (res := _hybrid_start()) is not None:  # numbers kept: the CLG network learned
        learned = hybrid_label(res)
        start, label, notes = res.dag, f"{learned} (learned)", list(res.notes)
    else:
        r = recipe()
        res = learn(r.structure, r.score, r.k, r.max_parents, r.seed).result
        start, label, learned, notes = res.dag, "Chow–Liu tree (learned)", "Chow–Liu tree", list(res.notes)
    ss.structure = {
        "dag": start.to_dict(),
        "fingerprint": structure_fingerprint(),
        "label": label,
        "learned": start.to_dict(),
        "learned_label": learned,
        "notes": notes,
        "undo": [],
        "redo": [],
        "segment": None,
    }
    ss.pair = None


def _hybrid_start():
    """The hybrid network learned on the mixed table, or None (its error flashed) when it cannot be."""
    from bnfk_core.errors import BnfkError

    from .messages import flash

    try:
        return hybrid.learned()
    except BnfkError as exc:
        flash("error", f"{exc} The structure is a Chow–Liu tree of the binned table instead.")
        return None


def structure_fingerprint() -> str:
    """What the structure was made for: the feature table and which of its columns stay numbers
    (:func:`.hybrid.fingerprint`)."""
    return hybrid.fingerprint(model_features().fingerprint())


def hybrid_label(res) -> str:
    """The label of a learned hybrid network (:class:`bnfk_core.hybrid.HybridLearned`)."""
    return f"Hybrid network: {res.method} on {res.score_name.upper()}"


def set_dag(new: DAG, label: str, *, segment=None, learned: bool = False, notes=None) -> None:
    """Replace the structure, pushing the old one on the undo stack.  While numbers are kept, a structure
    giving a discrete node a numeric parent is refused (StructureError naming the arc: the CLG family)."""
    hybrid.check_family(new)
    s = dict(st.session_state.structure)
    undo = list(s["undo"]) + [(s["dag"], s["label"], s.get("segment"))]
    s.update(dag=new.to_dict(), label=label, undo=undo[-MAX_UNDO:], redo=[], segment=segment)
    if learned:
        s.update(learned=new.to_dict(), learned_label=label, notes=list(notes or []))
    st.session_state.structure = s


def undo() -> bool:
    """Back to the structure before the last change (which :func:`redo` brings back)."""
    s = dict(st.session_state.structure)
    if not s["undo"]:
        return False
    d, label, seg = s["undo"][-1]
    redo_stack = list(s.get("redo", [])) + [(s["dag"], s["label"], s.get("segment"))]
    s.update(dag=d, label=label, segment=seg, undo=s["undo"][:-1], redo=redo_stack[-MAX_UNDO:])
    st.session_state.structure = s
    return True


def redo() -> bool:
    """Re-apply the change the last :func:`undo` took back."""
    s = dict(st.session_state.structure)
    if not s.get("redo"):
        return False
    d, label, seg = s["redo"][-1]
    undo_stack = list(s["undo"]) + [(s["dag"], s["label"], s.get("segment"))]
    s.update(dag=d, label=label, segment=seg, undo=undo_stack[-MAX_UNDO:], redo=s["redo"][:-1])
    st.session_state.structure = s
    return True


def edit(kind: str, u: str, v: str) -> None:
    """Add / remove / reverse the arc u -> v (StructureError on a cycle)."""
    e = ArcEdit(kind, u, v)
    arc = e.arc_after()
    set_dag(e.apply(dag()), f"edited ({e.describe()})", segment=None if arc is None else ("single-arc", arc))


def segment(kind: str, variables) -> None:
    """Build the segment ``kind`` on ``variables`` (in its role order), replacing the arcs among them."""
    new = apply_segment(dag(), kind, list(variables))
    label = f"edited ({SEGMENT_LABELS[kind].lower()} {segment_pattern(kind, variables)})"
    set_dag(new, label, segment=(kind, tuple(variables)))


#: the presets' starting variables per table (the triple ranking is the same for every session)
_PRESET_PICKS: OrderedDict = OrderedDict()


def preset_picks(d: DAG) -> list[str]:
    """The three variables the segment presets start from, in their reading order: of the triples with the
    highest mutual information as a V-structure (:func:`bnfk_core.analyses.segments.information.mi_ranking`,
    best first), the first whose V (its common child in the middle) would change ``d`` and on which the
    chain, the V- and the A-structure are all DAGs -- so that a lecture's presets are one click each and
    show something; ranked once per table (shared by the sessions)."""
    from bnfk_core.analyses.segments.information import mi_ranking
    from bnfk_core.errors import StructureError
    from bnfk_core.network.dag import segment_roles

    feat = model_features()
    if feat.n_vars < 3:
        return []
    key = feat.fingerprint()
    with _LEARNED_LOCK:
        ranking = _PRESET_PICKS.get(key)
    if ranking is None:
        ranking = mi_ranking(feat, "v", top=10)
        with _LEARNED_LOCK:
            _PRESET_PICKS[key] = ranking
            while len(_PRESET_PICKS) > MAX_LEARNED:
                _PRESET_PICKS.popitem(last=False)
    first = None
    for u, v, w in ranking["variables"]:  # the ranking's role order: w is the common child
        for picks in ([u, w, v], [v, w, u]):
            first = first or picks
            try:
                built = {k: apply_segment(d, k, segment_roles(k, picks)) for k in ("chain", "v", "a")}
            except StructureError:
                continue
            if built["v"].arcs != d.arcs:
                return picks
    return first or list(feat.variables[:3])
