"""Structure learning: one search function, :func:`learn_structure`, over the registered learners (the entry
point of learning, :func:`bnfk_core.learning.recipe.learn_recipe`, calls it).

:func:`learn_structure` returns a :class:`LearnResult` whose DAG is over the data's variables.  Every method
learns from the rows without missing cells, and every result is scored with the same decomposable score
(:mod:`bnfk_core.learning.scores`) on those rows.  All methods are deterministic: ties are broken by column
order.

The methods are :data:`bnfk_core.registry.LEARNERS` specs that carry their ``learn(scorer, task)`` and their
facts (the options they read, the most variables they handle), declared light in
:mod:`bnfk_core.learning.members`:
the presets here, the trees (:mod:`bnfk_core.learning.trees`: Chow–Liu, TAN, KDB), hill climbing
(:mod:`bnfk_core.learning.hill_climb`) and the exact optimum (:mod:`bnfk_core.learning.exact`).  Adding a
learner is one ``LEARNERS.register(LearnerSpec(name, label, learn=...))`` (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..data.limits import DEFAULT_MAX_BYTES, format_bytes, resolve_limit
from ..errors import StructureError
from ..network.dag import DAG, naive_bayes
from ..registry import LEARNERS, LEARNING_OPTIONS, check_options
from .kgv import raw_numbers
from .knowledge import check_knowledge, honours
from .scores import SCORES, LocalScorer, score_dag, scorer_for

__all__ = [
    "guard_width",
    "LearnResult",
    "LearnTask",
    "learn_structure",
    "learn_feature_structure",
    "knowledge_for",
    "raw_numbers",
    "scorer_context",
]

Progress = Callable[[float, str], None]


@dataclass
class LearnResult:
    """The outcome of :func:`learn_structure`.

    Attributes
    ----------
    dag : DAG over the data's variables (in data order).
    method, score_name : what was asked.
    score : total score of ``dag`` on the rows used (natural log, higher is better).
    n_rows_used : number of complete rows the structure was learned on.
    notes : sentences worth showing the user.
    seconds : wall-clock time.
    searched_raw : the numeric columns the score searched as numbers (``kgv``); their CPTs are
        still fitted on the quantile bins of ``data.states``.
    model : the network fitted along with the structure (structural EM fits its CPTs as it searches), else
    None.
    """

    dag: DAG
    method: str
    score_name: str
    score: float
    n_rows_used: int
    notes: list = field(default_factory=list)
    seconds: float = 0.0
    searched_raw: list = field(default_factory=list)
    model: object | None = None

    def to_dict(self) -> dict:
        return {
            "dag": self.dag.to_dict(),
            "method": self.method,
            "score_name": self.score_name,
            "score": self.score,
            "n_rows_used": self.n_rows_used,
            "notes": list(self.notes),
            "seconds": self.seconds,
            "searched_raw": list(self.searched_raw),
        }


@dataclass
class LearnTask:
    """What a learner's ``learn(scorer, task)`` receives (:class:`bnfk_core.registry.LearnerSpec`): the data's
    variables, the class index ``cls`` (None without a class column), the options of :func:`learn_structure`,
    the rows the scorer counts (``rows_used``) and where they come from (``source``); a learner appends
    sentences worth showing the user to ``notes``.  ``forbid`` and ``require`` are the forbidden and required
    arcs as (parent, child) index pairs (:mod:`bnfk_core.learning.knowledge`), None when there are none."""

    variables: list
    cls: int | None
    score: str
    k: int = 3
    max_parents: int | None = None
    seed: int = 0
    tabu: int = 100
    max_iter: int = 1_000_000
    epsilon: float = 1e-4
    restarts: int | None = None
    budget: int | None = None
    progress: Progress | None = None
    rows_used: int = 0
    source: str = "the data"
    notes: list = field(default_factory=list)
    start: list | None = None
    forbid: list | None = None
    require: list | None = None


# ---------------------------------------------------------------------- the presets and the registered
# learners
def learn_empty(scorer: LocalScorer, task: LearnTask) -> list[tuple[int, ...]]:
    """``empty``: no arcs."""
    return [()] * len(task.variables)


def learn_naive_bayes(scorer: LocalScorer, task: LearnTask) -> list[tuple[int, ...]]:
    """``naive-bayes``: the class is the only parent of every feature."""
    return list(naive_bayes(task.variables, task.variables[task.cls]).parent_indices())


# ---------------------------------------------------------------------- entry point
def guard_width(method: str, n_vars: int, max_bytes: float | None = None, source: str = "the data") -> None:
    """Refuse, before any counting, a search whose n x n tables (its spec's ``pair_bytes`` per pair) exceed
    the memory limit (``max_bytes``, default the limit set for this run,
    :func:`bnfk_core.data.limits.memory_limit`): a 50,000-column file asks ``tree`` for 20 GB before it counts
    anything."""
    spec = LEARNERS.get(str(method).lower())
    per_pair = spec.pair_bytes if spec is not None else 0
    limit = resolve_limit(DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)
    need = per_pair * int(n_vars) ** 2
    if per_pair and limit is not None and need > limit:
        label = spec.label
        raise StructureError(
            f"{label} on {int(n_vars):,} variables of {source} needs about {format_bytes(need)} for its "
            f"variable-by-variable tables, more than the memory limit of {format_bytes(limit)}; "
            "drop columns, or raise the memory limit."
        )


def scorer_context(scorer):
    """The context a search with ``scorer`` runs in: its ``search_context()`` if it has one (the KGV scorer
    pins BLAS to one thread), else nothing."""
    make = getattr(scorer, "search_context", None)
    return make() if make is not None else contextlib.nullcontext()


def learn_structure(
    data,
    method: str,
    *,
    score: str = "bic",
    class_column: str | None = None,
    k: int = 3,
    max_parents: int | None = None,
    ess: float = 1.0,
    seed: int = 0,
    progress: Progress | None = None,
    max_iter: int = 1_000_000,
    tabu: int = 100,
    epsilon: float = 1e-4,
    restarts: int | None = None,
    budget: int | None = None,
    score_options: dict | None = None,
    scorer: LocalScorer | None = None,
    start: Sequence[Sequence[int]] | None = None,
    forbid=None,
    require=None,
) -> LearnResult:
    """Learn a DAG over ``data.variables``.

    Parameters
    ----------
    data : CategoricalData
    method : a name of :data:`bnfk_core.registry.LEARNERS`
        ``empty``; ``naive-bayes`` (class); ``hc`` iterated tabu search
        (:func:`~bnfk_core.learning.tabu.tabu_search`:
        climb, tabu walk, seeded perturbations); ``hc-greedy`` the greedy climb (best of ``restarts + 1``
        seeded climbs, :func:`~bnfk_core.learning.hill_climb.hill_climb`; the published protocols use it);
        ``tree`` Chow–Liu tree rooted at the class (if any) or the first variable; ``tan`` (class); ``kdb``
        (class, ``k`` feature parents); ``exact`` optimal DAG by dynamic programming (at most its spec's
        ``max_variables``).
    score : one of ``bic``, ``aic``, ``k2``, ``bdeu``, ``qnml``
        Optimised by ``hc`` and ``exact``; reported for every method.
    class_column : the class variable; defaults to ``data.class_column``.
    k : feature parents per feature in ``kdb``.
    max_parents : in-degree bound for ``hc`` and ``exact``.
    ess : equivalent sample size of ``bdeu``.
    seed : how ``hc`` breaks ties between equally good moves (see :func:`hill_climb`); every method
        is deterministic for a given seed (the others break ties by column order).
    progress : optional ``progress(fraction, message)`` callback.
    max_iter, tabu, epsilon : hill-climbing iterations, tabu-list length, minimal improvement.
    restarts : ``hc``: the seeded perturbations (kicks) of every chain of the tabu search (default None:
        :data:`~bnfk_core.learning.tabu.ILS_KICKS`); ``hc-greedy`` also climbs with seeds
        ``seed+1 .. seed+restarts`` and keeps the best DAG (default None: 4, best of 5 climbs).
    budget : ``hc`` only: the most family scores the search computes before it stops exploring (default
        None: no bound; :func:`~bnfk_core.learning.tabu.learn_tabu`).  Counted in scores, not seconds, so one
        seed gives one DAG on every machine.
    score_options : options of a score with its own scorer (``kgv``: ``kappa``, ``sigma``, ``kernel``,
        ``bin_numbers``); the numeric columns ``data.numbers`` are offered to it as raw values.
    scorer : a ready :class:`~bnfk_core.learning.scores.LocalScorer` over ``data``'s columns in place of the
        one on the complete rows (how :mod:`bnfk_core.learning.incomplete` learns from every row); its
        ``rows_used`` and ``note`` attributes, when present, say which rows it counts.
    start : ``hc`` and ``hc-greedy`` only: the parents (indices) of every variable of an acyclic graph every
    climb starts from
        (default the empty graph; structural EM climbs from its current network).
    forbid, require : the arcs the network must not hold and must hold (text ``"A->B, C->D"`` or pairs of
        names; :func:`~bnfk_core.learning.knowledge.check_knowledge`), honoured by the learners that declare
        them (``hc``, ``hc-greedy``, ``tree``, ``exact``); another learner given one refuses before any
        counting.

    Raises
    ------
    StructureError
        Unknown method or score, missing class column, no complete rows, more variables than the
        method's ``max_variables`` (``exact``), an arc constraint that cannot hold or that the method cannot
        honour.
    """
    t0 = time.perf_counter()
    method = str(method).lower()
    if method not in LEARNERS:
        raise StructureError(
            f"Unknown structure-learning method '{method}'; choose one of {', '.join(LEARNERS)}."
        )
    score = str(score).lower()
    if score not in SCORES:
        raise StructureError(f"Unknown score '{score}'; choose one of {', '.join(SCORES)}.")
    # the bounds every learner reads, checked as declared (LEARNING_OPTIONS) before anything else reads them
    check_options(
        (LEARNING_OPTIONS["max_parents"], LEARNING_OPTIONS["k"]),
        {"max_parents": max_parents, "k": k},
        f"structure-learning method '{method}'",
        StructureError,
    )
    variables = list(data.variables)
    cls_name = class_column if class_column is not None else getattr(data, "class_column", None)
    cls = None
    if cls_name is not None:
        if cls_name not in variables:
            raise StructureError(f"Class column '{cls_name}' is not one of the data's variables.")
        cls = variables.index(cls_name)
    if start is not None and method not in ("hc", "hc-greedy"):
        raise StructureError(f"A start graph is a hill-climbing option; method '{method}' does not take one.")
    if budget is not None and not LEARNERS[method].applies("budget"):
        takers = ", ".join(n for n, s in LEARNERS.items() if s.applies("budget"))
        raise StructureError(
            f"A search budget is an option of {takers}; method '{method}' does not take one."
        )
    if start is not None:  # checked where it enters: n parent lists of node indices, acyclic
        from .hill_climb import start_parents

        start = start_parents(start, len(variables))
    if LEARNERS[method].needs_class and cls is None:
        raise StructureError(f"Method '{method}' needs a class column; choose one.")
    too_wide = LEARNERS[method].too_wide(len(variables))
    if too_wide:
        raise StructureError(f"{too_wide} Use 'hc' or drop columns.")
    asked = dict(k=k, max_parents=max_parents, seed=seed, tabu=tabu, max_iter=max_iter, epsilon=epsilon)
    LEARNERS[method].check_task(
        LearnTask(variables, cls, score, restarts=restarts, budget=budget, start=start, **asked)
    )
    forbid, require = knowledge_for(method, variables, forbid, require, max_parents)

    def report(frac, msg):
        if progress is not None:
            progress(float(frac), msg)

    guard_width(method, len(variables), source=getattr(data, "source", "the data"))
    report(0.0, f"{method}: counting")
    if scorer is None:
        scorer = scorer_for(
            data.codes,
            data.cardinalities,
            score,
            ess=ess,
            weights=getattr(data, "weights", None),
            numbers=raw_numbers(data),
            options=score_options,
        )
    searched_raw = [variables[i] for i in getattr(scorer, "raw_columns", ())]
    used = int(getattr(scorer, "rows_used", scorer.n))
    notes = [
        getattr(scorer, "note", None)
        or (
            f"structure learned on {scorer.n} complete rows of {scorer.n_rows_total}"
            + (" (rows with missing cells are skipped)" if scorer.n < scorer.n_rows_total else "")
        )
    ]
    spec = LEARNERS[method]
    if used == 0 and spec.needs_rows:
        raise StructureError(
            "No row is complete (every row has a missing cell); structure learning needs complete rows "
            "(or --missing-data available-case / em)."
        )
    task = LearnTask(
        variables,
        cls,
        score,
        k=int(k),
        max_parents=max_parents,
        seed=seed,
        tabu=tabu,
        max_iter=max_iter,
        epsilon=epsilon,
        restarts=restarts,
        budget=budget,
        progress=progress,
        rows_used=used,
        source=getattr(data, "source", "the data"),
        notes=notes,
        start=start,
        forbid=forbid or None,
        require=require or None,
    )
    with scorer_context(scorer):
        parents = spec.learn(scorer, task)
    if not honours(parents, forbid, require):  # a learner that declares the constraints must keep them
        raise StructureError(f"Method '{method}' returned a network that breaks the given arc constraints.")
    if forbid or require:
        notes.append(f"{len(forbid)} forbidden and {len(require)} required arc(s) honoured")
    dag = DAG(variables, [(variables[p], variables[i]) for i, ps in enumerate(parents) for p in ps])
    total = scorer.total(dag.parent_indices()) if used else 0.0
    if searched_raw:
        notes.append(
            f"the {score} score searched {len(searched_raw)} numeric column(s) as numbers; their CPTs "
            "use the quantile bins"
        )
    report(1.0, f"{method}: done, {dag.n_arcs} arcs")
    return LearnResult(
        dag=dag,
        method=method,
        score_name=score,
        score=float(total),
        n_rows_used=used,
        notes=notes,
        seconds=time.perf_counter() - t0,
        searched_raw=searched_raw,
    )


def knowledge_for(method: str, variables, forbid, require, max_parents=None) -> tuple[list, list]:
    """The forbidden and required arcs of a search with ``method`` as index pairs into ``variables``
    (:func:`~bnfk_core.learning.knowledge.check_knowledge`), or a one-sentence StructureError -- before any
    counting -- when an arc cannot hold or ``method`` does not honour arc constraints (its spec does not
    declare ``forbid`` and ``require``)."""
    from .knowledge import parse_arcs

    if not (parse_arcs(forbid) or parse_arcs(require)):
        return [], []
    spec = LEARNERS[str(method).lower()]
    if not spec.applies("forbid"):
        takers = ", ".join(n for n, s in LEARNERS.items() if s.applies("forbid"))
        raise StructureError(
            f"{spec.label.split(' (')[0]} ('{spec.name}') cannot honour forbidden or required arcs; "
            f"choose one of {takers}."
        )
    return check_knowledge(variables, forbid, require, max_parents=max_parents)


def learn_feature_structure(
    data,
    method: str,
    *,
    score: str = "bic",
    k: int = 3,
    max_parents: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    score_options: dict | None = None,
    ess: float = 1.0,
) -> LearnResult:
    """A structure over the *feature* columns of ``data`` (its class column is never a node of the result).

    Methods that need the class as a node (``naive-bayes``, ``tan``, ``kdb``) learn on all of ``data``
    with its class column, then drop the class and its arcs; the reported score is recomputed on the
    features.  The other methods learn on ``data.without_class()``.  This is how
    :func:`~bnfk_core.learning.recipe.learn_recipe` turns a classifier structure into a network for the Fisher
    kernel, whose features never include the class.
    """
    feats = data.without_class()
    if not LEARNERS[method].needs_class:
        return learn_structure(
            feats,
            method,
            score=score,
            k=k,
            max_parents=max_parents,
            seed=seed,
            progress=progress,
            score_options=score_options,
            ess=ess,
        )
    if data.class_column is None:
        raise StructureError(f"Method '{method}' needs a class column; choose one.")
    res = learn_structure(
        data,
        method,
        score=score,
        k=k,
        max_parents=max_parents,
        seed=seed,
        progress=progress,
        score_options=score_options,
        ess=ess,
    )
    dag = res.dag.subgraph(feats.variables)
    res.notes.append(
        f"the arcs from the class '{data.class_column}' are dropped: the class is never a kernel feature"
    )
    res.dag = dag
    res.score = score_dag(
        feats.codes,
        feats.cardinalities,
        dag,
        score,
        weights=getattr(feats, "weights", None),
        numbers=raw_numbers(feats),
        options=score_options,
        ess=ess,
    )
    return res
