"""The learning family's built-in members, declared light (the registries read them on first use): the
structure-learning methods (:data:`bnfk_core.registry.LEARNERS`), the scores
(:data:`~bnfk_core.registry.SCORES`) and the missing-data methods (:data:`~bnfk_core.registry.MISSING_DATA`),
with the defaults and limits the faces
show.  Behaviour is a :func:`~bnfk_core.registry.lazy` reference to this package's modules, imported when a
member first runs, so importing this module loads no numerical library (the CLI's ``--help`` reads it).
"""

from __future__ import annotations

from ..registry import (
    ESS,
    LEARNING_OPTIONS,
    MAX_RESTARTS,
    PSEUDO_COUNT,
    Interval,
    LearnerSpec,
    MissingDataSpec,
    Option,
    ScoreSpec,
    lazy,
)

__all__ = [
    "LEARNERS",
    "SCORES",
    "MISSING_DATA",
    "EXACT_MAX_VARIABLES",
    "DEFAULT_MISSING_DATA",
    "KGV_KERNELS",
    "MAX_LANDSCAPE_VARIABLES",
    "DEFAULT_C",
    "LEARNING_OPTIONS",
    "MAX_RESTARTS",
    "MAX_BOOTSTRAP",
]

#: the most bootstrap replicates one arc-strength call learns (:mod:`.bootstrap`)
MAX_BOOTSTRAP = 10_000
#: the most variables the exact (dynamic programming) search handles
EXACT_MAX_VARIABLES = 20
#: the missing-data method used when none is named (chosen by the measurements in docs/IMPUTATION.md)
DEFAULT_MISSING_DATA = "em"
#: the kernels of the KGV score (:mod:`.kgv`)
KGV_KERNELS = ("gaussian", "linear")

#: how structural EM searches in its rounds (``round_search``): ``climb`` greedy climbs from the current
#: network, ``climb-full`` the same and one full search when they stop, ``full`` the full search every round
ROUND_SEARCHES = ("climb", "climb-full", "full")
#: the most variables a score landscape enumerates every DAG of (:mod:`.landscape`)
MAX_LANDSCAPE_VARIABLES = 5
#: the metagraph surrogate's default regulariser, on the unit-diagonal kernel (:mod:`.metagraph`)
DEFAULT_C = 1e-9

#: what the two hill climbs read
_CLIMB = tuple(
    LEARNING_OPTIONS[n]
    for n in ("max_parents", "seed", "tabu", "max_iter", "epsilon", "restarts", "start", "forbid", "require")
)
#: what a learner that honours forbidden and required arcs reads
_KNOWLEDGE = (LEARNING_OPTIONS["forbid"], LEARNING_OPTIONS["require"])

_S = "bnfk_core.learning.structure"

LEARNERS = (
    LearnerSpec("empty", "Empty network (no arcs)", learn=lazy(_S, "learn_empty"), needs_rows=False),
    LearnerSpec(
        "naive-bayes",
        "Naive Bayes (class -> every feature)",
        needs_class=True,
        learn=lazy(_S, "learn_naive_bayes"),
        needs_rows=False,
    ),
    # hill climbing's gains (3 float64), legal moves (3 bool), adjacency and reachability (bool): 29, rounded
    # up
    LearnerSpec(
        "hc",
        "Hill climbing (tabu walks and restarts; optimises the score)",
        uses_score=True,
        learn=lazy("bnfk_core.learning.tabu", "learn_tabu"),
        pair_bytes=32,
        options=(*_CLIMB, LEARNING_OPTIONS["budget"]),
    ),
    LearnerSpec(
        "hc-greedy",
        "Greedy hill climbing (best of 5 seeded climbs; the published protocols)",
        uses_score=True,
        learn=lazy("bnfk_core.learning.hill_climb", "learn_hc"),
        pair_bytes=32,
        options=_CLIMB,
    ),
    # the spanning tree's weight matrix
    LearnerSpec(
        "tree",
        "Chow–Liu tree",
        learn=lazy("bnfk_core.learning.trees", "learn_tree"),
        pair_bytes=8,
        options=_KNOWLEDGE,
    ),
    LearnerSpec(
        "tan",
        "TAN (tree-augmented naive Bayes)",
        needs_class=True,
        learn=lazy("bnfk_core.learning.trees", "learn_tan"),
        pair_bytes=8,
    ),
    LearnerSpec(
        "kdb",
        "KDB (k-dependence Bayes)",
        needs_class=True,
        learn=lazy("bnfk_core.learning.trees", "learn_kdb"),
        options=(LEARNING_OPTIONS["k"],),
    ),
    LearnerSpec(
        "exact",
        f"Exact optimum (dynamic programming, ≤ {EXACT_MAX_VARIABLES} variables)",
        uses_score=True,
        learn=lazy("bnfk_core.learning.exact", "learn_exact"),
        options=(LEARNING_OPTIONS["max_parents"], *_KNOWLEDGE),
        max_variables=EXACT_MAX_VARIABLES,
    ),
)


def _POSITIVE(name: str, help_text: str) -> Option:
    return Option(name, Interval(float, 0, None, closed="neither"), None, help_text)


SCORES = (
    ScoreSpec("bic", "BIC", "log-likelihood minus (log N / 2) x free parameters"),
    ScoreSpec("aic", "AIC", "log-likelihood minus the number of free parameters"),
    ScoreSpec("k2", "K2", "Cooper-Herskovits marginal likelihood, uniform Dirichlet(1) prior"),
    ScoreSpec(
        "bdeu", "BDeu", "Bayesian Dirichlet equivalent uniform marginal likelihood (ess)", options=(ESS,)
    ),
    ScoreSpec("qnml", "qNML", "quotient normalized maximum likelihood (thesis eq. 2.4)"),
    ScoreSpec(
        "kgv",
        "KGV (raw numbers)",
        "kernel generalized variance MDL score (Bach & Jordan 2002); numbers searched unbinned",
        scorer=lazy("bnfk_core.learning.kgv", "make_kgv_scorer"),
        options=(
            ESS,
            _POSITIVE("kappa", "the regularisation kappa (None: Bach and Jordan's default for N)"),
            _POSITIVE("sigma", "the Gaussian kernel's width (None: its default)"),
            Option("kernel", KGV_KERNELS, "gaussian", "the kernel of the numbers", none=False),
            _POSITIVE("eta", "the incomplete Cholesky's tolerance per row (None: kappa / 100)"),
            Option("bin_numbers", bool, False, "search the numbers by their bins, not raw", none=False),
            Option(
                "markov_blanket",
                bool,
                False,
                "prune the search to DAGs whose moral graph the KGV Markov-blanket graph covers (section 5)",
                none=False,
            ),
        ),
    ),
)

_I = "bnfk_core.learning.incomplete"
_SCORE = Option("score", str, "bic", "the score of the search (a name of the scores)", none=False)

MISSING_DATA = (
    MissingDataSpec(
        "complete-rows",
        "Complete rows only",
        lazy(_I, "_learn_complete_rows"),
        "the rows without a missing cell (the thesis's protocol)",
        options=(_SCORE,),
        every_row=False,
    ),
    MissingDataSpec(
        "available-case",
        "Available case",
        lazy(_I, "_learn_available_case"),
        "every family on the rows where it is observed; penalty on those rows",
        options=(_SCORE,),
    ),
    MissingDataSpec(
        "em",
        "Structural EM",
        lazy(_I, "_learn_em"),
        "Friedman (1998): expected counts from the current network, search, repeat while the "
        "observed-data BIC rises",
        options=(
            _SCORE,
            Option("params", str, "smoothed", "the CPT estimator of every round's network", none=False),
            PSEUDO_COUNT,
            Option(
                "max_rounds", Interval(int, 1, 1000), 10, "the most rounds of search and E-step", none=False
            ),
            Option(
                "round_search",
                ROUND_SEARCHES,
                "climb",
                "hc's search in the rounds: climb (a greedy climb from the current network), climb-full "
                "(the climbs, then one full search when they stop) or full (the full search every round)",
                none=False,
            ),
            Option("runner", None, None, "where the E-step passes run", user=False),
        ),
    ),
)
