"""Numbers as numbers: which numeric columns of the current table stay numbers (the visitor's choice, the
hybrid reader's rule by default), the mixed table they give, and the conditional linear Gaussian network the
Structure and Model pages learn, fit and query on it (:mod:`bnfk_core.hybrid`).

* :func:`candidates` -- the feature columns that hold only numbers, with their distinct values;
* :func:`kinds` -- ``{column: "number" | "category"}``: a column with at least
  :data:`~bnfk_core.hybrid.MIN_NUMERIC_LEVELS` distinct values is a number unless the visitor made it a
  category (``number_kinds`` holds the visitor's switches), one with fewer a category unless made a number;
* :func:`mixed` -- the feature columns as a :class:`~bnfk_core.hybrid.MixedData` when a column stays a
  number (else None: the table is all categories and every page works on it as before);
* :func:`learned` and :func:`fitted` -- :func:`~bnfk_core.hybrid.learn_hybrid_network` searched or on a
  given DAG (structural EM / EM over missing cells), cached for every session of the server;
* :func:`binned_sentence` -- the one sentence a page that still needs a discrete network shows;
* the Model page's evidence on the hybrid network (``hybrid_evidence``: ``{node: state or number}``) and
  its cached answers (:func:`posterior`, :func:`conditional`).

Rows sampled from a textbook network are all categories; a large file read in chunks is binned (the
sentence of :func:`binned_sentence` says so).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

import numpy as np
import streamlit as st

from bnfk_core.errors import BnfkError, DataError, ModelError, StructureError
from bnfk_core.hybrid import MIN_NUMERIC_LEVELS, HybridNet, MixedData, family_check, load_mixed
from bnfk_core.network.dag import DAG
from bnfk_core.serving.session_files import NUMBER_KINDS

from .bigfiles import streamed
from .choices import SAMPLE_DIR, data_settings, na_values_of, textbook_of
from .tables import feature_data, io_bytes

__all__ = [
    "KINDS_KEY",
    "EVIDENCE_KEY",
    "NUMBER",
    "CATEGORY",
    "applies",
    "candidates",
    "kinds",
    "numeric_columns",
    "set_numbers",
    "mixed",
    "on",
    "fingerprint",
    "check_family",
    "learned",
    "fitted",
    "binned_sentence",
    "evidence",
    "set_evidence",
    "clear_evidence",
    "posterior",
    "conditional",
    "gram",
    "imputed",
    "kernel_setup",
    "kernel_covered",
]

KINDS_KEY, EVIDENCE_KEY = "number_kinds", "hybrid_evidence"
NUMBER, CATEGORY = NUMBER_KINDS  # the session file's names (bnfk_core.serving.session_files)

_LOCK = threading.Lock()
_TABLES: OrderedDict = OrderedDict()  # (reading key) -> (upload bytes or None, value)
_MODELS: OrderedDict = OrderedDict()  # (table key, what) -> learned / fitted network
MAX_ENTRIES = 32


def _remember(store: OrderedDict, key, content, value):
    with _LOCK:
        store[key] = (content, value)
        while len(store) > MAX_ENTRIES:
            store.popitem(last=False)
    return value


def _recall(store: OrderedDict, key, content):
    with _LOCK:
        hit = store.get(key)
        if hit is not None and hit[0] is content:
            store.move_to_end(key)
            return hit[1]
    return None


def applies() -> bool:
    """Whether the current data can keep numbers: a bundled sample or an upload held in memory (rows sampled
    from a textbook network are categories; a large file read in chunks is binned)."""
    s = data_settings()
    if streamed(s) is not None or textbook_of(s["dataset"]) is not None or s["dataset"] == "path":
        return False
    return s["dataset"] != "upload" or st.session_state.get("upload") is not None


def _source():
    """``(file, bytes or None, reading options)`` of the current data, as :mod:`.tables` reads it."""
    from .tables import _source as source

    s = data_settings()
    name, content = source(s["dataset"])
    na = na_values_of(s)
    drop = tuple(s["drop_columns"]) + ((s["class_column"],) if s["class_column"] else ())
    opts = (s["missing_policy"], tuple(na) if isinstance(na, list) else na, drop)
    return name, content, opts


def _read(name, content, opts, **kw) -> MixedData:
    missing_policy, na, drop = opts
    src = str(SAMPLE_DIR / name) if content is None else io_bytes(name, content)
    return load_mixed(
        src,
        missing_policy=missing_policy,
        na_values=list(na) if isinstance(na, tuple) else na,
        drop_columns=drop,
        drop_identifiers=False,
        **kw,
    )


def _numbers() -> MixedData | None:
    """The current file read with every column of numbers (at least two distinct values) as a number, cached
    per file and reading options; None when :func:`applies` is False or the file cannot be read so."""
    if not applies():
        return None
    name, content, opts = _source()
    key = ("numbers", name, id(content), opts)
    hit = _recall(_TABLES, key, content)
    if hit is not None:
        return hit[0]
    try:
        m = _read(name, content, opts, min_numeric_levels=2)
    except BnfkError:
        m = None
    return _remember(_TABLES, key, content, (m,))[0]


def candidates() -> dict:
    """``{column: distinct values}`` of the feature columns holding only numbers (at least two distinct
    values), in column order; empty when :func:`applies` is False."""
    m = _numbers()
    if m is None:
        return {}
    feats = set(feature_data().variables)
    return {
        m.variables[i]: int(np.unique(m.values[~np.isnan(m.values[:, i]), i]).size)
        for i in m.numeric
        if m.variables[i] in feats
    }


def kinds() -> dict:
    """``{column: "number" | "category"}`` of every :func:`candidates` column: the visitor's switch, else the
    hybrid reader's rule (a number with at least MIN_NUMERIC_LEVELS distinct values)."""
    chosen = st.session_state.get(KINDS_KEY) or {}
    return {
        c: chosen.get(c, NUMBER if n >= MIN_NUMERIC_LEVELS else CATEGORY) for c, n in candidates().items()
    }


def numeric_columns() -> list:
    """The columns that stay numbers, in column order."""
    return [c for c, k in kinds().items() if k == NUMBER]


def set_numbers(columns) -> None:
    """Keep exactly ``columns`` (of :func:`candidates`) as numbers, the other candidates as categories: the
    switches that differ from the rule are stored (``number_kinds``)."""
    keep = set(columns)
    out = {}
    for c, n in candidates().items():
        k = NUMBER if c in keep else CATEGORY
        if k != (NUMBER if n >= MIN_NUMERIC_LEVELS else CATEGORY):
            out[c] = k
    st.session_state[KINDS_KEY] = out
    st.session_state[EVIDENCE_KEY] = {}


def mixed() -> MixedData | None:
    """The feature columns with the :func:`numeric_columns` as numbers and every other column as the pages'
    table has it (its states and codes: a number made a category has the levels, or quantile bins, of the
    discrete table), or None when no column stays a number."""
    nums = numeric_columns()
    if not nums:
        return None
    feat, m = feature_data(), _numbers()
    name, content, opts = _source()
    key = ("mixed", name, id(content), opts, tuple(nums), feat.fingerprint())
    hit = _recall(_TABLES, key, content)
    if hit is not None:
        return hit
    n, k = feat.n_rows, feat.n_vars
    if m is None or m.n_rows != n:
        raise DataError(f"The numbers of {feat.source} cannot be read row by row beside its categories.")
    codes = np.asarray(feat.codes, dtype=np.int32).copy()
    values = np.full((n, k), np.nan)
    kinds, states = [], []
    for j, v in enumerate(feat.variables):
        if v in nums:
            codes[:, j] = -1
            values[:, j] = m.values[:, m.index(v)]
            kinds.append("numeric")
            states.append(())
        else:
            kinds.append("discrete")
            states.append(tuple(feat.states[j]))
    out = MixedData(tuple(feat.variables), tuple(kinds), tuple(states), codes, values, feat.source)
    return _remember(_TABLES, key, content, out)


def on() -> bool:
    """Whether the pages work on a hybrid network (a column stays a number)."""
    return bool(numeric_columns())


def fingerprint(feat_fingerprint: str) -> str:
    """The structure's fingerprint: the feature table's and which columns stay numbers (a switch learns the
    structure again)."""
    nums = numeric_columns()
    return feat_fingerprint + ("|numbers:" + json.dumps(nums) if nums else "")


def check_family(d: DAG) -> None:
    """A StructureError (one sentence naming the arc) when ``d`` gives a discrete node a numeric parent while
    numbers are kept (:func:`bnfk_core.hybrid.family_check`); nothing otherwise."""
    nums = set(numeric_columns())
    if nums:
        family_check(d, ["numeric" if v in nums else "discrete" for v in d.nodes])


def _table_key() -> tuple:
    name, content, opts = _source()
    return (name, id(content), opts, tuple(numeric_columns())), content


def learned(score: str = "bic", tabu_steps: int = 0, max_parents: int | None = None):
    """:func:`~bnfk_core.hybrid.learn_hybrid_network` searched on :func:`mixed` (hill climbing; structural
    EM when cells are missing), cached per table and options for every session.

    Returns
    -------
    bnfk_core.hybrid.HybridLearned
    """
    from bnfk_core.hybrid import learn_hybrid_network

    tk, content = _table_key()
    key = (tk, "learned", score, int(tabu_steps), max_parents)
    hit = _recall(_MODELS, key, content)
    if hit is not None:
        return hit
    out = learn_hybrid_network(mixed(), score=score, tabu_steps=int(tabu_steps), max_parents=max_parents)
    # the network found is also the fitted network of its DAG (the pages after Home reuse it, unrefitted)
    out.model.fit_info["notes"] = " ".join(out.notes)
    _remember(_MODELS, _fitted_key(tk, out.dag), content, out.model)
    return _remember(_MODELS, key, content, out)


def _fitted_key(tk: tuple, d: DAG) -> tuple:
    return (tk, "fitted", json.dumps(d.to_dict(), sort_keys=True))


def fitted(d: DAG) -> HybridNet:
    """The CLG network of the structure ``d`` on :func:`mixed`, cached per table and structure.

    The network :func:`learned` found, when ``d`` is its DAG: on a complete table that is the maximum-
    likelihood fit of ``d`` itself; with missing cells it is structural EM's last fit of ``d``. Any other
    DAG is fitted afresh (maximum likelihood; EM over the missing cells)."""
    from bnfk_core.hybrid import learn_hybrid_network

    tk, content = _table_key()
    key = _fitted_key(tk, d)
    hit = _recall(_MODELS, key, content)
    if hit is not None:
        return hit
    check_family(d)
    out = learn_hybrid_network(mixed(), dag=d)
    out.model.fit_info["notes"] = " ".join(out.notes)
    return _remember(_MODELS, key, content, out.model)


def binned_sentence(what: str = "This page", plural: bool = False) -> str:
    """The one sentence a page working on a discrete network shows while numbers are kept (else ""): it
    names the columns it reads as categories (``plural``: ``what`` names several things)."""
    nums = numeric_columns()
    if nums:
        bins = int(data_settings()["bins"])
        return (
            f"{what} {'need' if plural else 'needs'} a discrete network: it reads the numeric column(s) "
            f"{', '.join(nums)} as categories "
            f"(those with more than 50 distinct values cut into {bins} quantile bins)."
        )
    if not applies() and streamed() is not None:
        return (
            f"{what} {'work' if plural else 'works'} on a discrete network: a file read in chunks has its "
            "numeric columns cut into quantile bins."
        )
    return ""


# ---------------------------------------------------------------------- evidence on the hybrid network
def evidence(model: HybridNet) -> dict:
    """The evidence ``{node: state (str) or number (float)}`` on ``model``'s nodes, in node order."""
    ev = st.session_state.get(EVIDENCE_KEY) or {}
    out = {}
    for i, v in enumerate(model.variables):
        if v not in ev:
            continue
        if model.kinds[i] == "numeric" and isinstance(ev[v], (int, float)):
            out[v] = float(ev[v])
        elif model.kinds[i] == "discrete" and str(ev[v]) in model.states[i]:
            out[v] = str(ev[v])
    return out


def set_evidence(v: str, value) -> None:
    ev = dict(st.session_state.get(EVIDENCE_KEY) or {})
    ev[str(v)] = float(value) if isinstance(value, (int, float, np.floating)) else str(value)
    st.session_state[EVIDENCE_KEY] = ev


def clear_evidence(v: str | None = None) -> None:
    """Clear the evidence on ``v`` (all of it when ``v`` is None)."""
    ev = {} if v is None else dict(st.session_state.get(EVIDENCE_KEY) or {})
    ev.pop(str(v), None)
    st.session_state[EVIDENCE_KEY] = ev


_ANSWERS: OrderedDict = OrderedDict()


def _cached(key, compute):
    with _LOCK:
        hit = _ANSWERS.get(key)
        if hit is not None:
            _ANSWERS.move_to_end(key)
            return hit
    out = compute()
    with _LOCK:
        _ANSWERS[key] = out
        while len(_ANSWERS) > 256:
            _ANSWERS.popitem(last=False)
    return out


def posterior(model: HybridNet, ev: dict) -> dict:
    """``{discrete node: probabilities (r,)}`` given ``ev``, exact (:func:`bnfk_core.hybrid.
    discrete_posterior`); a ModelError (one sentence) when the evidence has density zero or is not
    covered."""
    from bnfk_core.hybrid import discrete_posterior

    def compute():
        return {k: v[0] for k, v in discrete_posterior(model, dict(ev)).items()}

    return _cached((model.key(), "post", tuple(ev.items())), compute)


def conditional(model: HybridNet, ev: dict, node: str) -> tuple[float, float] | str:
    """(mean, variance) of unobserved numeric ``node`` given ``ev`` (:func:`bnfk_core.hybrid.
    conditional_normal`), or the sentence saying why that case is not covered."""
    from bnfk_core.hybrid import conditional_normal

    def compute():
        try:
            mean, var = conditional_normal(model, dict(ev), node)
        except (ModelError, StructureError) as exc:
            return str(exc)
        return float(mean[0]), float(var[0])

    return _cached((model.key(), "cond", node, tuple(ev.items())), compute)


# ---------------------------------------------------------------------- the hybrid Fisher kernel, imputation
def gram(model: HybridNet, rows, normalize: bool = False) -> np.ndarray:
    """The hybrid network's Fisher kernel (:func:`bnfk_core.kernels.hybrid_fisher_gram`) between the ``rows``
    of :func:`mixed`, cached per model, rows and normalisation (read-only: shared by every session)."""
    from bnfk_core.kernels import hybrid_fisher_gram

    rows = np.asarray(rows, dtype=np.int64)

    def compute():
        K = hybrid_fisher_gram(model, mixed().subset(rows), normalize=bool(normalize))
        K.setflags(write=False)
        return K

    return _cached((model.key(), "gram", rows.tobytes(), bool(normalize)), compute)


def imputed(model: HybridNet):
    """:func:`bnfk_core.hybrid.hybrid_imputation` of :func:`mixed` under ``model``: every missing cell filled
    (a number by its conditional mean, a category by its most probable state), cached per model."""
    from bnfk_core.hybrid import hybrid_imputation

    return _cached((model.key(), "imputed"), lambda: hybrid_imputation(model, mixed()))


def kernel_setup(model: HybridNet, rows, feature_columns, kernel: str):
    """The hybrid Fisher kernel of the ``rows`` as the Clustering page's kernel set-up
    (:class:`bnfk_core.analyses.cluster.clustering.KernelSetup` of ``kernel``, structure ``hybrid``)."""
    from bnfk_core.analyses.cluster.clustering import KernelSetup

    K = gram(model, rows)
    return KernelSetup(
        K,
        kernel,
        None,
        tuple(feature_columns),
        structure="hybrid",
        params="ml",
        n_arcs=model.dag.n_arcs,
        notes=["The Fisher kernel of the hybrid network (numbers as numbers)."],
    )


def kernel_covered(kind: str) -> bool:
    """Whether kernel ``kind`` has a hybrid counterpart while numbers are kept: the Fisher kernel read
    straight off the network (its spec's ``gram``, Theorem 1), which
    :func:`bnfk_core.kernels.hybrid_fisher_gram` extends to CLG networks."""
    from bnfk_core.registry import KERNELS

    spec = KERNELS[kind]
    return on() and spec.gram is not None and not spec.latent_model
