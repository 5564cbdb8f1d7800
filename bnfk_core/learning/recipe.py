"""One recipe for the network an analysis uses, and the one function that learns it.

A :class:`Recipe` is a frozen value: the structure-learning method, the score it optimises, the CPT estimator,
how missing cells are treated, and their options.  :func:`learn_recipe` is the one entry point of learning: it
turns a table and a recipe, passed down whole, into a :class:`Learned` network -- the structure search's
:class:`~bnfk_core.learning.structure.LearnResult`, the fitted :class:`~bnfk_core.network.model.BayesNet` and
the note on how it was learned ("structural EM on all 602 rows ...", "structure learned on 27 complete rows of
602 ...").  Every face -- the app's pages and its Learn button, the CLI, the report, the imputers and the
Python estimators -- takes a recipe and calls this function, so the same table gives the same network
everywhere unless a recipe says otherwise.  The searches it calls
(:func:`~bnfk_core.learning.structure.learn_structure`, :func:`~bnfk_core.learning.incomplete.learn_network`)
are called by nothing outside :mod:`bnfk_core.learning` (``tests/test_architecture.py``).

The CPT estimator of :data:`DEFAULT_RECIPE` is BDeu, a likelihood-equivalent estimator: Markov-equivalent
structures fitted to the same table then represent the same distribution, which is the condition of the
paper's Theorem 4 (equivalent networks give the same Fisher kernel).  The paper's smoothed (+1) estimator
stays available by name (``params="smoothed"``) and is what the published protocols use.

References
----------
.. [1] Heckerman, Geiger & Chickering (1995), "Learning Bayesian networks: the combination of knowledge and
   statistical data", Machine Learning 20 -- BDeu is likelihood-equivalent.
.. [2] The bnfk paper, Theorem 4 (invariance of the Fisher kernel under equivalent structures).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import StructureError
from ..registry import ESTIMATORS, LEARNERS, LEARNING_OPTIONS, MISSING_DATA, SCORES

__all__ = ["Recipe", "DEFAULT_RECIPE", "Learned", "learn_recipe", "recipe_of", "fit_recipe"]


@dataclass(frozen=True)
class Recipe:
    """Which network an analysis uses.

    Parameters
    ----------
    structure : str
        A structure-learning method of :data:`bnfk_core.registry.LEARNERS` (``tree``, ``hc``, ``empty``, ...).
        Methods that need the class as a node (``naive-bayes``, ``tan``, ``kdb``) learn with it, then the
        class and its arcs are dropped: the class is never a kernel feature.
    score : str
        The score the search optimises (:data:`bnfk_core.registry.SCORES`).
    params : str
        The CPT estimator (:data:`bnfk_core.registry.ESTIMATORS`).
    missing_data : str
        How the structure search treats missing cells (:data:`bnfk_core.registry.MISSING_DATA`).
    pseudo_count : float
        The estimator's pseudo-count (``smoothed``) or equivalent sample size (``bdeu``).
    max_parents : int or None
        In-degree bound of the searches that take one.
    k : int
        Feature parents per feature of ``kdb``.
    seed : int
        Tie-breaking and restarts of the searches, sampling in structural EM.
    ess : float
        Equivalent sample size of the ``bdeu`` score the search optimises (the CPT estimator's is
        ``pseudo_count``).
    forbid, require : tuple of (str, str)
        Arcs (from, to) the network must not hold and must hold (bnlearn's black and white lists); text
        ``"A->B, C->D"`` is read too (:func:`~bnfk_core.learning.knowledge.parse_arcs`).  Only the learners
        that declare them honour them (``hc``, ``hc-greedy``, ``tree``, ``exact``); :meth:`check` refuses
        another.
    budget : int or None
        The most family scores the search computes before it stops exploring (``hc`` only; None: no bound).
    """

    structure: str = "tree"
    score: str = "bic"
    params: str = "bdeu"
    missing_data: str = "em"
    pseudo_count: float = 1.0
    max_parents: int | None = None
    k: int = 2
    seed: int = 0
    ess: float = 1.0
    forbid: tuple = ()
    require: tuple = ()
    budget: int | None = None

    def check(self) -> Recipe:
        """This recipe with its names lower-cased and its arcs as tuples of pairs, or a one-sentence error
        naming the unknown name, the arc that is not one, or a learner that cannot honour arcs."""
        from .knowledge import parse_arcs

        names = {"structure": LEARNERS, "score": SCORES, "params": ESTIMATORS, "missing_data": MISSING_DATA}
        out = {f: registry[str(getattr(self, f)).lower()].name for f, registry in names.items()}
        for f, word in (("forbid", "forbidden"), ("require", "required")):
            out[f] = tuple(parse_arcs(getattr(self, f), f"The {word} arcs"))
        spec = LEARNERS[out["structure"]]
        if (out["forbid"] or out["require"]) and not spec.applies("forbid"):
            takers = ", ".join(n for n, s in LEARNERS.items() if s.applies("forbid"))
            raise StructureError(
                f"{spec.label.split(' (')[0]} ('{spec.name}') cannot honour forbidden or required arcs; "
                f"choose one of {takers}."
            )
        if not self.pseudo_count > 0:
            raise StructureError(f"The pseudo-count must be positive, not {self.pseudo_count!r}.")
        if not self.ess > 0:
            raise StructureError(f"The equivalent sample size (ess) must be positive, not {self.ess!r}.")
        if self.max_parents is not None and int(self.max_parents) < 0:
            raise StructureError(f"max_parents must be 0 or more, not {self.max_parents!r}.")
        if self.budget is not None:
            if not spec.applies("budget"):
                takers = ", ".join(n for n, s in LEARNERS.items() if s.applies("budget"))
                raise StructureError(
                    f"A search budget is an option of {takers}; method '{spec.name}' does not take one."
                )
            LEARNING_OPTIONS["budget"].check(
                self.budget, f"structure-learning method '{spec.name}'", StructureError
            )
        return dataclasses.replace(self, **out)

    def replace(self, **changes) -> Recipe:
        """A copy with ``changes`` (``None`` values are ignored, so optional flags can be passed as they
        come)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict:
        """The fields as a dict (hashable values: arcs as tuples); ``forbid`` and ``require`` only when they
        hold arcs and ``budget`` only when it is set, so a recipe without them has the keys it always had
        (links, session files, JSON)."""
        out = dataclasses.asdict(self)
        for f in ("forbid", "require"):
            if not out[f]:
                del out[f]
        if out["budget"] is None:
            del out["budget"]
        return out

    @classmethod
    def from_dict(cls, values: dict) -> Recipe:
        """A recipe from :meth:`to_dict`'s output (unknown keys are refused in one sentence)."""
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - fields)
        if unknown:
            raise StructureError(
                f"Unknown recipe field '{unknown[0]}'; fields are {', '.join(sorted(fields))}."
            )
        return cls(**values).check()  # check() turns JSON's lists of arcs back into tuples

    def describe(self) -> str:
        """One line for captions and JSON: ``tree / bic, CPTs bdeu (a=1), missing cells: em``."""
        a = f" (a={self.pseudo_count:g})" if ESTIMATORS[self.params].uses_pseudo_count else ""
        arcs = "".join(
            f", {len(getattr(self, f))} {word} arc(s)"
            for f, word in (("forbid", "forbidden"), ("require", "required"))
            if getattr(self, f)
        )
        cpts = f"CPTs {self.params}{a}, missing cells: {self.missing_data}"
        return f"{self.structure} / {self.score}{arcs}, {cpts}"


#: the network every face uses unless told otherwise
DEFAULT_RECIPE = Recipe()


def recipe_of(recipe: Recipe | None = None, **named) -> Recipe:
    """The recipe an entry point uses: ``recipe`` (default :data:`DEFAULT_RECIPE`) with the options it was
    given by name (``structure=``, ``score=``, ``params=``, ...; ``None`` means "not given"), checked.

    Every function that learns "the network" resolves its arguments through this, so a call without options
    learns the default recipe's network and a call with some options changes only those."""
    return (recipe or DEFAULT_RECIPE).replace(**named).check()


@dataclass
class Learned:
    """A learned network: the recipe it follows, the structure search's result and the fitted model.

    Attributes
    ----------
    recipe : Recipe
        The recipe, checked.
    result : LearnResult
        The structure search's outcome (DAG, score, rows used, notes, seconds).
    model : BayesNet
        The network with its CPTs fitted as the recipe says.
    """

    recipe: Recipe
    result: object
    model: object

    @property
    def dag(self):
        return self.result.dag

    @property
    def notes(self) -> list:
        """The sentences on how the network was learned (which rows, which method), first the rows'."""
        return list(self.result.notes)

    @property
    def note(self) -> str:
        """How the network was learned, in one line: ``structural EM on all 602 rows: ...`` or ``structure
        learned on 27 complete rows of 602 (rows with missing cells are skipped)``."""
        return "; ".join(self.result.notes)


def learn_recipe(
    data,
    recipe: Recipe | None = None,
    *,
    with_class: bool = False,
    progress=None,
    score_options: dict | None = None,
    runner=None,
) -> Learned:
    """Learn the network ``recipe`` describes from ``data``: the one entry point of learning.

    The structure comes from the recipe's search (``structure``, ``score``, ``max_parents``, ``k``, ``seed``,
    ``ess``, honouring its ``forbid`` and ``require`` arcs) on the rows its ``missing_data`` method keeps
    (structural EM and available-case counts use every row; ``complete-rows`` skips the rows with a missing
    cell); the CPTs from its estimator (``params``,
    ``pseudo_count``), by EM over the missing cells unless ``missing_data`` is ``complete-rows``.  A table
    without a missing cell gets the plain search and the closed-form CPTs whatever ``missing_data`` says.

    Parameters
    ----------
    data : CategoricalData
        The table (missing cells as -1).
    recipe : Recipe, optional
        Defaults to :data:`DEFAULT_RECIPE`.
    with_class : bool
        False (the default): the network over the feature columns -- the class column, if any, is never a
        node (a class-node method, ``naive-bayes``, ``tan``, ``kdb``, learns with it on the complete rows,
        then the class and its arcs are dropped).  True: the network over every column of ``data``, its class
        column a node (a classifier's network, the imputers' network over the whole table).
    progress : callable, optional
        ``progress(fraction, message)``.
    score_options : dict, optional
        Options of a score with its own scorer (``kgv``: ``kernel``, ``kappa``, ``bin_numbers``).
    runner : optional
        Where the counting and E-step passes run (:mod:`bnfk_core.data.runners`; a Dask runner: on its
        workers, as ``learn --engine dask``); here when None.  The same network either way.

    Returns
    -------
    Learned
        The recipe, the search's :class:`~bnfk_core.learning.structure.LearnResult`, the model (whose
        ``fit_info["recipe"]`` records the recipe) and the note on how it was learned.

    Raises
    ------
    StructureError
        An unknown name in the recipe, a class-node method without a class column, or an arc constraint
        that names an unknown variable, cannot hold, or that the learner cannot honour.
    """
    from .incomplete import learn_network
    from .structure import knowledge_for, learn_feature_structure

    recipe = (recipe or DEFAULT_RECIPE).check()
    table = data if with_class else data.without_class()
    # the arcs checked against the columns before any counting (structural EM counts before its first search)
    knowledge_for(recipe.structure, table.variables, recipe.forbid, recipe.require, recipe.max_parents)
    # without a missing cell every missing-data method is the plain search and the closed-form CPTs
    # (structural EM's first network is its answer), so the complete-rows path computes the same network
    # without EM
    missing = recipe.missing_data if table.has_missing else "complete-rows"
    options = {"max_parents": recipe.max_parents, "k": recipe.k, "seed": recipe.seed}
    if recipe.forbid or recipe.require:
        options.update(forbid=list(recipe.forbid), require=list(recipe.require))
    if recipe.budget is not None:
        options["budget"] = recipe.budget
    if LEARNERS[recipe.structure].needs_class and not with_class:
        res = learn_feature_structure(
            data,
            recipe.structure,
            score=recipe.score,
            progress=progress,
            score_options=score_options,
            ess=recipe.ess,
            **options,
        )
        model = fit_recipe(res.dag, table, recipe)
    else:
        res, model = learn_network(
            table,
            recipe.structure,
            missing_data=missing,
            score=recipe.score,
            params=recipe.params,
            pseudo_count=recipe.pseudo_count,
            em_cpts=missing != "complete-rows",
            progress=progress,
            score_options=score_options,
            runner=runner,
            ess=recipe.ess,
            **options,
        )
    if (recipe.forbid or recipe.require) and not any("arc(s) honoured" in n for n in res.notes):
        res.notes.append(f"{len(recipe.forbid)} forbidden and {len(recipe.require)} required arc(s) honoured")
    model.fit_info["recipe"] = recipe.to_dict()
    return Learned(recipe, res, model)


def fit_recipe(dag, data, recipe: Recipe | None = None):
    """The CPTs of a fixed structure ``dag`` (learned elsewhere or edited by hand) fitted to ``data`` as
    ``recipe`` says -- the way :func:`learn_recipe` fits the structure it learns.

    The recipe's estimator (``params``, ``pseudo_count``); on a table with missing cells, EM over them
    (:func:`~bnfk_core.learning.incomplete.em_parameters`) unless the recipe's ``missing_data`` is
    ``complete-rows``, which keeps the available-case counts of :func:`~bnfk_core.network.model.fit` (the
    thesis's protocol).  A complete table gets the closed-form fit either way.

    Parameters
    ----------
    dag : DAG
        The structure; its nodes name columns of ``data``.
    data : CategoricalData
        The rows (missing cells as -1; with ``weights``, distinct rows with their multiplicities).
    recipe : Recipe, optional
        Defaults to :data:`DEFAULT_RECIPE` (BDeu CPTs, EM over missing cells).

    Returns
    -------
    BayesNet
        Its ``fit_info`` records the recipe and ``cpts_by`` (``em`` or ``available-case``).
    """
    from ..network.model import fit
    from .incomplete import em_parameters

    recipe = (recipe or DEFAULT_RECIPE).check()
    sub = data if tuple(data.variables) == tuple(dag.nodes) else data.select(list(dag.nodes))
    em = recipe.missing_data != "complete-rows" and bool((sub.codes < 0).any())
    model = (
        em_parameters(dag, data, recipe.params, recipe.pseudo_count, seed=recipe.seed)
        if em
        else fit(dag, data, method=recipe.params, pseudo_count=recipe.pseudo_count)
    )
    model.fit_info.update(recipe=recipe.to_dict(), cpts_by="em" if em else "available-case")
    return model
