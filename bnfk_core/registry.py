"""One source of truth per option family: kernels, structure-learning methods, scores, CPT estimators,
missing-data methods, imputers, clusterers, classifiers and prototype criteria.

A registry is a read-only mapping ``name -> spec``; everything that offers a choice reads it: the CLI's
``choices``, the app's widgets, the clustering and classification loops, the reproduction code and the docs
tables (``python -m bnfk_core options``).

Adding a kernel is one :func:`KERNELS.register <Registry.register>` call in the module that defines it (see
``docs/ARCHITECTURE.md`` for a worked example)::

    registry.KERNELS.register(registry.KernelSpec(
        name="overlap-toy", label="Toy overlap", abbr="OT", fit=my_fit, shift="adaptive", psd=True,
        description="fraction of equal values"))

``my_fit(train, **options)`` receives the training rows (a ``CategoricalData`` without the label
column) and returns an object with ``gram(X, Y=None, *, normalize=False, max_bytes=...)`` and
``contributions(x, y)`` (per-variable terms of one pair that sum to K(x, y)); see
:class:`bnfk_core.kernels.fisher.FittedKernel`.

This module imports nothing from the package but its errors and names no module above it, so every layer may
use it.  Each family's built-in members are declared beside the family, in a light module (``members.py`` of
the family's package: names, labels, options and limits, with the behaviour as :func:`lazy` references to
the family's own modules); the package face (:mod:`bnfk_core`) tells each registry which member modules fill
it (:meth:`Registry.members_from`), and a registry reads them on its first use.  So ``import bnfk_core`` and a
CLI ``--help`` stay light, and a member's numerical module is imported when the member is first run.
"""

from __future__ import annotations

import difflib
import importlib
import math
import numbers
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from .errors import BnfkError, KernelError, ModelError, PrototypeError, StructureError

__all__ = [
    "Registry",
    "Lazy",
    "Interval",
    "Option",
    "check_options",
    "Declares",
    "PSEUDO_COUNT",
    "ESS",
    "SHIFTS",
    "TRANSFORMS",
    "CLUSTER_OPTIONS",
    "CLASSIFY_OPTIONS",
    "PROTOTYPE_OPTIONS",
    "IMPUTE_OPTIONS",
    "KernelSpec",
    "LearnerSpec",
    "ScoreSpec",
    "EstimatorSpec",
    "ClustererSpec",
    "ClassifierSpec",
    "CriterionSpec",
    "KERNELS",
    "CLASSIFIERS",
    "CRITERIA",
    "lazy",
    "LabelView",
    "LEARNERS",
    "LEARNER_OPTIONS",
    "LEARNING_OPTIONS",
    "MAX_RESTARTS",
    "KERNEL_CONTEXT",
    "SCORES",
    "ESTIMATORS",
    "CLUSTERERS",
    "MissingDataSpec",
    "MISSING_DATA",
    "ImputerSpec",
    "IMPUTERS",
    "feature_learners",
    "kernel_abbr",
    "face",
]


@dataclass(frozen=True)
class Interval:
    """The numbers an option takes: ``type`` (``int`` or ``float``) between ``low`` and ``high`` (None: no
    bound), ``closed`` saying which ends belong (``"both"``, ``"left"``, ``"right"`` or ``"neither"``), as
    scikit-learn's ``Interval`` constraint.  A bool is not a number here, and neither NaN nor an infinity is
    ever inside; a float interval takes ints too, an int interval only integers."""

    type: type
    low: float | None = None
    high: float | None = None
    closed: str = "both"

    def __post_init__(self):
        if self.type not in (int, float) or self.closed not in ("both", "left", "right", "neither"):
            raise BnfkError(f"An interval is of int or float, closed both/left/right/neither: {self}.")

    def __contains__(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        if self.type is int and not isinstance(value, numbers.Integral):
            return False
        v = float(value)
        if not math.isfinite(v):
            return False
        low_in = self.closed in ("both", "left")
        high_in = self.closed in ("both", "right")
        if self.low is not None and (v < self.low or (v == self.low and not low_in)):
            return False
        return not (self.high is not None and (v > self.high or (v == self.high and not high_in)))

    def describe(self) -> str:
        """``"an integer from 1 to 100"``, ``"a number > 0"``, ``"a number in (0, 1]"``, ..."""
        what = "an integer" if self.type is int else "a number"
        low, high = (None if b is None else _number(b) for b in (self.low, self.high))
        low_in, high_in = self.closed in ("both", "left"), self.closed in ("both", "right")
        if low is None and high is None:
            return what
        if high is None:
            return f"{what} {'≥' if low_in else '>'} {low}"
        if low is None:
            return f"{what} {'≤' if high_in else '<'} {high}"
        if self.type is int and low_in and high_in:
            return f"{what} from {low} to {high}"
        return f"{what} in {'[' if low_in else '('}{low}, {high}{']' if high_in else ')'}"


@dataclass(frozen=True)
class Option:
    """One option of a registered member, declared once: read by validation (:func:`check_options`), the
    CLI's flags, the app's widgets and ``docs/OPTIONS.md``.

    Attributes
    ----------
    name : the keyword the member's behaviour takes.
    allowed : what a value may be -- an :class:`Interval`, a tuple of choices, a type (``bool``, ``str``;
        a bool is never an int) or None (anything: an object the code passes, such as a network).
    default : the value used when the option is not given (documentation; the behaviour applies it).
    help : one line for ``--help``, widgets and the docs.
    none : None is accepted too (it then means the default).
    user : offered to users (flags, widgets, docs); False for what the code passes (a network, a callback).
    ui_range : ``(low, high, step)`` a widget or a link offers, inside ``allowed`` (None: no widget range).
    """

    name: str
    allowed: object = None
    default: object = None
    help: str = ""
    none: bool = True
    user: bool = True
    ui_range: tuple | None = None

    def allows(self, value) -> bool:
        """True when ``value`` is allowed."""
        if value is None:
            return self.none
        a = self.allowed
        if a is None:
            return True
        if isinstance(a, Interval):
            return value in a
        if isinstance(a, tuple):
            return any(_is_choice(value, c) for c in a)
        if a is bool:
            return isinstance(value, bool | _numpy_bool())
        if a is int:
            return isinstance(value, numbers.Integral) and not isinstance(value, bool)
        return isinstance(value, a)

    def describe(self) -> str:
        """What the option allows, as words (``"one of 'none', 'variable'"``, ``"a number > 0"``)."""
        a = self.allowed
        if isinstance(a, Interval):
            text = a.describe()
        elif isinstance(a, tuple):
            text = "one of " + ", ".join(repr(c) for c in a)
        elif a is bool:
            text = "True or False"
        elif a is None:
            text = "any value"
        else:
            text = {int: "an integer", str: "a string", float: "a number"}.get(a, f"a {a.__name__}")
        return text + (" (or None)" if self.none and a is not None else "")

    def check(self, value, owner: str, error: type = BnfkError):
        """``value`` if allowed, else ``error`` in one sentence naming the option, ``owner`` and what is
        allowed."""
        if not self.allows(value):
            shown = repr(value)
            if len(shown) > 60:
                shown = shown[:57] + "..."
            raise error(f"The {owner} option '{self.name}' must be {self.describe()}, not {shown}.")
        return value


def _number(bound) -> str:
    """A bound as written: an integer without a decimal point, else the shortest form (``1e-09``)."""
    return str(int(bound)) if float(bound).is_integer() and abs(bound) < 1e15 else f"{bound:g}"


def _is_choice(value, choice) -> bool:
    """``value`` is ``choice`` (a string only as a string, a bool only as a bool)."""
    if isinstance(choice, str) or isinstance(value, str):
        return isinstance(value, str) and isinstance(choice, str) and value == choice
    if isinstance(choice, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(choice, bool) and value == choice
    return value == choice


def _numpy_bool():
    numpy = sys.modules.get("numpy")
    return numpy.bool_ if numpy is not None else bool


def check_options(
    declared, options: Mapping, owner: str, error: type = BnfkError, context: tuple = ()
) -> dict:
    """``options`` checked against ``declared`` (a sequence of :class:`Option`): a name not declared (and not
    in ``context``, the names every member receives and may ignore) or a value its option does not allow
    raises ``error`` with one sentence naming the option, ``owner`` (e.g. ``"kernel 'fisher'"``) and what is
    allowed.  A ``context`` entry that is an :class:`Option` rather than a name is checked whenever it is
    given, by a member that ignores it too (a shared option is never out of range).  Returns the options as a
    dict.

    Examples
    --------
    >>> check_options((Option("alpha", Interval(float, 0, 1, closed="right"), 0.25),), {"alpha": 0.5}, "x")
    {'alpha': 0.5}
    """
    by_name = {o.name: o for o in declared}
    shared = {c.name if isinstance(c, Option) else c: c for c in context}
    for name, value in options.items():
        option = by_name.get(name)
        if option is None:
            if name in shared:
                if isinstance(shared[name], Option):
                    shared[name].check(value, owner, error)
                continue
            names = [o.name for o in declared if o.user] or [o.name for o in declared]
            close = difflib.get_close_matches(str(name), list(by_name), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            listed = f"its options are {', '.join(names)}" if names else "it takes no options"
            raise error(f"The {owner} has no option '{name}'{hint}; {listed}.")
        option.check(value, owner, error)
    return dict(options)


class Registry(Mapping):
    """An ordered, read-only mapping ``name -> spec`` with one ``register`` door.

    ``registry[name]`` raises a :class:`~bnfk_core.errors.BnfkError` naming the family and the
    valid choices when ``name`` is unknown.  The built-in members come from the light modules named by
    :meth:`members_from`, read on the first use of the registry (in that order); :meth:`register` adds a
    member after them.
    """

    def __init__(self, family: str, error: type = BnfkError, context: tuple = ()):
        self.family = family
        self.error = error
        #: the options the faces hand every member of the family (a member that declares one checks it;
        #: the others ignore it): e.g. the network a kernel may be built from; an :class:`Option` here is
        #: checked whenever it is given
        self.context = tuple(context)
        self._registered: dict = {}
        self._sources: list = []  # (module, attribute) of the built-in members not read yet
        self._named: set = set()  # every source named so far (naming one twice adds nothing)

    def members_from(self, *sources: str) -> None:
        """Name the light modules that declare this family's built-in members, each as ``"module:attribute"``
        (the attribute a sequence of specs); they are imported and registered on the registry's first use.

        The package face (:mod:`bnfk_core`) calls this, so that this module names no module above it."""
        for source in sources:
            module, sep, attribute = source.partition(":")
            if not sep or not module or not attribute:
                raise BnfkError(f"A member source is 'module:attribute', not '{source}'.")
            if (module, attribute) not in self._named:
                self._named.add((module, attribute))
                self._sources.append((module, attribute))

    @property
    def _specs(self) -> dict:
        """The registered specs, after reading the built-in members declared by :meth:`members_from`
        (once)."""
        if self._sources:
            sources, self._sources = self._sources, []
            for module, attribute in sources:  # in the order named, after the members held so far
                for spec in getattr(importlib.import_module(module), attribute):
                    if spec.name in self._registered:
                        raise BnfkError(f"Two {self.family} members are named '{spec.name}' ({module}).")
                    self._registered[spec.name] = spec
        return self._registered

    def register(self, spec, *, replace: bool = False):
        """Add ``spec`` under ``spec.name`` (a second registration of a name is refused unless
        ``replace``)."""
        if spec.name in self._specs and not replace:
            raise BnfkError(f"A {self.family} named '{spec.name}' is already registered.")
        self._registered[spec.name] = spec
        return spec

    def unregister(self, name: str) -> None:
        """Remove ``name`` (for tests and plug-ins that withdraw an option)."""
        self._specs.pop(name, None)

    def check(self, name) -> str:
        """``name`` if it is a member of this family, else the family's error naming it and every choice
        (validation before any work: ``ESTIMATORS.check(params)``)."""
        if name not in self:
            raise self.error(f"Unknown {self.family} '{name}'; choose one of {', '.join(self._specs)}.")
        return name

    def validate(self, name: str, options: Mapping) -> dict:
        """``options`` checked against the options member ``name`` declares (its spec's ``options``): an
        unknown option name or a value outside what its :class:`Option` allows raises the family's error in
        one sentence naming the option, the member and what is allowed.  Names of :attr:`context` the member
        does not declare are let through (it ignores them).  Returns the options as a dict."""
        spec = self[name]
        return check_options(spec.options, options, f"{self.family} '{spec.name}'", self.error, self.context)

    def shared(self) -> tuple:
        """The :class:`Option` s of :attr:`context`: what every member of the family receives, checked
        whenever given (``docs/OPTIONS.md`` lists them once for the family)."""
        return tuple(c for c in self.context if isinstance(c, Option))

    def __getitem__(self, name):
        try:
            return self._specs[name]
        except (KeyError, TypeError):
            raise self.error(
                f"Unknown {self.family} '{name}'; choose one of {', '.join(self._specs)}."
            ) from None

    def __contains__(self, name) -> bool:
        return name in self._specs

    def get(self, name, default=None):
        return self._specs.get(name, default)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._specs))

    def __len__(self) -> int:
        return len(self._specs)

    def names(self, **where) -> tuple:
        """Names whose spec has every attribute equal to the given values, in registration order."""
        return tuple(n for n, s in self._specs.items() if all(getattr(s, k) == v for k, v in where.items()))

    def labels(self) -> dict:
        """``{name: label}`` for widgets and tables."""
        return {n: s.label for n, s in self._specs.items()}

    def label_view(self, keep: Callable | None = None) -> LabelView:
        """A live read-only ``{name: label}`` of the members ``keep(spec)`` accepts (all by default): widgets
        built from it offer members registered later too."""
        return LabelView(self, keep)


class LabelView(Mapping):
    """``{name: label}`` of a registry's members (those ``keep(spec)`` accepts), read at each use."""

    def __init__(self, registry: Registry, keep: Callable | None = None):
        self._registry, self._keep = registry, keep

    def _members(self) -> dict:
        return {n: s.label for n, s in self._registry.items() if self._keep is None or self._keep(s)}

    def __getitem__(self, name):
        return self._members()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._members())

    def __len__(self) -> int:
        return len(self._members())

    def __repr__(self) -> str:
        return f"LabelView({self._members()!r})"


class Declares:
    """What every spec reads off its ``options``: whether it takes an option, and its declaration."""

    options: tuple = ()

    def takes(self, *option: str) -> bool:
        """True when one of ``option`` is among the options this member declares."""
        return any(o.name in option for o in self.options)

    def option(self, name: str) -> Option:
        """The declaration of this member's option ``name`` (a BnfkError naming the options otherwise)."""
        for o in self.options:
            if o.name == name:
                return o
        raise BnfkError(f"'{self.name}' has no option '{name}'.")


@dataclass(frozen=True)
class KernelSpec(Declares):
    """A kernel between rows of categorical data.

    Attributes
    ----------
    name : the CLI / URL / JSON name (lower case, ``-`` between words).
    label, abbr : for widgets and tables (``abbr`` as in the thesis: F, SH, H).
    fit : ``fit(train, **options) -> FittedKernel``; ``train`` has no label column.  Options the
        Fisher kernel understands (others ignore them): ``model``, ``dag``, ``structure``, ``score``,
        ``params``, ``seed``, ``progress``.
    shift : the correlation-clustering shift ``auto`` resolves to: ``"adaptive"`` (double
        centering, thesis §5.2) or ``"none"``.
    psd : True when every Gram matrix is positive semidefinite, False when not, None if unknown.
    uses_network : the kernel is built from a Bayesian network (the app then offers structure options).
    family : ``"fisher"`` (network kernels), ``"baseline"`` (thesis baselines), ``"measure"``
        (Boriah et al. similarity measures) or ``"kernel"`` (other categorical kernels).
    options : the :class:`Option` s its ``fit`` takes (:meth:`Registry.validate` checks them; the network
        options of :attr:`Registry.context` it does not declare it ignores).
    gram : ``gram(model, data, other=None, *, normalize, max_bytes, marginals) -> K`` when the Gram matrix is
        read straight off a given network (the Fisher kernel, Theorem 1); None: ``fit`` then ``gram``.
    latent_model : built from a latent class network (a hidden root, always missing): a face may hand it
        the latent class model it holds, and on such a network its Gram matrix is ``gram``'s of the
        kernel that has one.
    """

    name: str
    label: str
    abbr: str
    fit: Callable
    shift: str = "none"
    psd: bool | None = True
    uses_network: bool = False
    family: str = "kernel"
    description: str = ""
    options: tuple = ()
    gram: Callable | None = None
    latent_model: bool = False


#: the most seeded restarts (perturbations, climbs) a search takes: each is a whole search
MAX_RESTARTS = 1000

#: every option a learner reads from its task (:class:`bnfk_core.learning.structure.LearnTask`), declared
#: once; each learner's spec names those it reads (as these Options or by name)
LEARNING_OPTIONS = {
    o.name: o
    for o in (
        Option("max_parents", Interval(int, 0, None), None, "the most parents of a node (None: no bound)"),
        Option("k", Interval(int, 0, 1000), 3, "KDB's feature parents per feature", none=False),
        Option(
            "seed",
            Interval(int, 0, 2**32 - 1),
            0,
            "how ties between equally good moves are broken",
            none=False,
        ),
        Option("tabu", Interval(int, 0, 1_000_000), 100, "the tabu list's length", none=False),
        Option(
            "max_iter", Interval(int, 1, 100_000_000), 1_000_000, "the most moves of one climb", none=False
        ),
        Option(
            "epsilon",
            Interval(float, 0, None),
            1e-4,
            "the least gain of score a move must bring",
            none=False,
        ),
        Option(
            "restarts",
            Interval(int, 0, MAX_RESTARTS),
            None,
            "seeded perturbations of every tabu chain (hc), or climbs after the first (hc-greedy)",
        ),
        Option(
            "budget",
            Interval(int, 1, 10**12),
            None,
            "the most family scores the search computes before it stops exploring (None: no bound)",
        ),
        Option(
            "start",
            None,
            None,
            "the parents of every variable of the graph every climb starts from",
            user=False,
        ),
        Option("forbid", None, None, "arcs (from, to) the network must not hold (text 'A->B, ...' or pairs)"),
        Option("require", None, None, "arcs (from, to) the network must hold (text 'A->B, ...' or pairs)"),
    )
}
#: the pseudo-count of the smoothed CPT estimators; 0 or NaN would divide by zero where a parent configuration
#: is never seen
PSEUDO_COUNT = Option(
    "pseudo_count", Interval(float, 0, None, closed="neither"), 1.0, "the Dirichlet prior's pseudo-count a"
)
#: BDeu's equivalent sample size, handed to every score's scorer (the others ignore it)
ESS = Option(
    "ess", Interval(float, 0, None, closed="neither"), 1.0, "BDeu's equivalent sample size", none=False
)


def _seed(help_text: str) -> Option:
    return Option("seed", Interval(int, 0, 2**32 - 1), 0, help_text, none=False)


#: how correlation clustering shifts the Gram matrix (``auto``: the kernel's registered shift)
SHIFTS = ("auto", "adaptive", "none")
#: how spectral clustering turns a Gram matrix into an affinity
TRANSFORMS = ("shift-min", "cosine", "rbf")

#: what the clustering analysis hands every clusterer (each reads those it declares; every one given is
#: checked)
CLUSTER_OPTIONS = {
    o.name: o
    for o in (
        Option("kernel", str, None, "the kernel's name (its registered shift)", user=False),
        Option("transform", TRANSFORMS, "shift-min", "spectral clustering's affinity", none=False),
        Option("shift", SHIFTS, "auto", "correlation clustering's shift (auto: the kernel's)", none=False),
        Option(
            "restarts",
            Interval(int, 1, 100_000),
            25,
            "local-search restarts of correlation clustering (lca: its seeded EM starts)",
            none=False,
        ),
        _seed("the seed of the starts"),
        Option("init_labels", None, None, "a warm start, one label per row", user=False),
        Option("n_init", Interval(int, 1, 1000), 3, "seeded k-means++ starts of kmeans-features", none=False),
    )
}
#: what the classification analysis hands every kernel classifier
CLASSIFY_OPTIONS = {
    o.name: o
    for o in (
        Option("k", Interval(int, 1, 100_000), 7, "neighbours of the kNN vote", none=False),
        Option("C", Interval(float, 0, 1e12, closed="right"), 1.0, "the SVM's penalty", none=False),
        Option(
            "neighbours",
            ("distance", "similarity"),
            "distance",
            "kNN's neighbours by kernel distance or by largest kernel value",
            none=False,
        ),
    )
}
#: what the prototype search hands every criterion (the random subsets, the greedy swaps)
PROTOTYPE_OPTIONS = {
    o.name: o
    for o in (
        Option(
            "n_init",
            Interval(int, 1, 100_000),
            100,
            "random subsets the greedy start is the best of",
            none=False,
        ),
        _seed("the seed of the random subsets"),
        Option("max_passes", Interval(int, 1, 100_000), 50, "the most passes of greedy swaps", none=False),
        Option("init", None, None, "the starting subset (row numbers)", user=False),
    )
}
#: what the imputation entry points hand every imputer (each reads those it declares; every one given is
#: checked): the neighbours, the seed, a given network, the run's cache, and the network to learn
IMPUTE_OPTIONS = {
    o.name: o
    for o in (
        Option(
            "model",
            None,
            None,
            "a network over the table's columns, used instead of learning one",
            user=False,
        ),
        Option("k", Interval(int, 1, 10_000), 3, "neighbours of the kNN vote", none=False),
        _seed("the seed of the kNN ties and of the network's search"),
        Option("cache", dict, None, "what the methods of one run share", user=False),
        Option("structure", str, "auto", "the structure-learning method of the network (auto: exact or hc)"),
        Option("score", str, "qnml", "the score of the network's search"),
        Option("params", str, "cnml", "the network's CPT estimator"),
        PSEUDO_COUNT,
        LEARNING_OPTIONS["max_parents"],
        Option(
            "recipe",
            None,
            None,
            "the whole recipe of the network (the other options then ignored)",
            user=False,
        ),
    )
}

#: the learning options the faces offer a widget or flag for (:attr:`LearnerSpec.options` declares which a
#: learner reads): the in-degree bound, KDB's number of feature parents, the seed that breaks ties
LEARNER_OPTIONS = ("max_parents", "k", "seed")


@dataclass(frozen=True)
class LearnerSpec(Declares):
    """A structure-learning method of :func:`bnfk_core.learning.structure.learn_structure`.

    ``learn(scorer, task) -> parents`` finds the structure: ``scorer`` is the local score over the columns
    (a :class:`bnfk_core.learning.scores.LocalScorer`), ``task`` a
    :class:`bnfk_core.learning.structure.LearnTask` (the variables, the class index, the options,
    ``progress``; ``task.notes`` takes sentences worth showing the user); it returns one tuple of parent
    indices per column.

    The facts a face needs to offer it: ``options`` declares the learning options it reads besides the
    score (:class:`Option` s, the task's attributes of those names; a widget for another of
    :data:`LEARNER_OPTIONS` is disabled while it is chosen) and ``max_variables`` the most variables it
    handles (None: no bound), checked before it runs."""

    name: str
    label: str
    needs_class: bool = False  # the class variable is a node (naive Bayes, TAN, KDB)
    uses_score: bool = False  # the search optimises the chosen score
    description: str = ""
    learn: Callable | None = None
    needs_rows: bool = True  # False: learns without a complete row (no counts needed)
    pair_bytes: int = 0  # bytes per pair of variables its n x n tables keep at once (learn.guard_width)
    options: tuple = ()  # the Options it reads (attributes of the learning task)
    max_variables: int | None = None

    def __post_init__(self):
        unknown = [o for o in self.options if isinstance(o, str) and o not in LEARNING_OPTIONS]
        if unknown:
            raise StructureError(
                f"Learner '{self.name}' names unknown options {unknown}; the learning options are "
                f"{', '.join(LEARNING_OPTIONS)}."
            )
        declared = tuple(LEARNING_OPTIONS[o] if isinstance(o, str) else o for o in self.options)
        object.__setattr__(self, "options", declared)  # a name stands for its declaration

    def applies(self, option: str) -> bool:
        """True when ``option`` (e.g. one of :data:`LEARNER_OPTIONS`) changes what this learner does."""
        return any(o.name == option for o in self.options)

    def check_task(self, task) -> None:
        """The options this learner reads, taken from ``task``'s attributes, checked against their
        declarations (a StructureError naming the option otherwise)."""
        values = {o.name: getattr(task, o.name) for o in self.options if hasattr(task, o.name)}
        check_options(self.options, values, f"structure-learning method '{self.name}'", StructureError)

    def too_wide(self, n_vars: int) -> str | None:
        """A sentence saying why ``n_vars`` variables are too many for this learner, or None when they are
        not."""
        if self.max_variables is not None and int(n_vars) > self.max_variables:
            return (
                f"{self.label.split(' (')[0]} handles at most {self.max_variables} variables; "
                f"these data have {int(n_vars)}."
            )
        return None


@dataclass(frozen=True)
class ScoreSpec(Declares):
    """A decomposable structure score of :mod:`bnfk_core.learning.scores` (log scale, higher is better).

    ``scorer`` builds the local scorer of a score that is not computed from counts
    (``scorer(codes, cards, *, weights, numbers, **options)``, e.g. :mod:`bnfk_core.learning.kgv`); None for
    the count scores of :class:`bnfk_core.learning.scores.LocalScorer`."""

    name: str
    label: str
    description: str = ""
    scorer: Callable | None = None
    options: tuple = ()  # the Options its behaviour takes (Registry.validate)


@dataclass(frozen=True)
class EstimatorSpec(Declares):
    """A CPT estimator of :func:`bnfk_core.network.model.fit`."""

    name: str
    label: str
    uses_pseudo_count: bool = False
    description: str = field(default="")
    #: Markov-equivalent structures fitted to the same table give the same distribution (paper, Theorem 4)
    likelihood_equivalent: bool = False
    options: tuple = ()  # the Options its behaviour takes (Registry.validate)


@dataclass(frozen=True)
class MissingDataSpec(Declares):
    """How structure learning treats missing cells (:mod:`bnfk_core.learning.incomplete`).

    ``learn(data, method, **options) -> LearnResult`` learns the DAG; ``every_row``: it learns from the rows
    with missing cells too (False: the complete rows only)."""

    name: str
    label: str
    learn: Callable
    description: str = ""
    options: tuple = ()  # the Options its behaviour takes (Registry.validate)
    every_row: bool = True


@dataclass(frozen=True)
class ImputerSpec(Declares):
    """An imputation method of ``impute`` and ``impute-benchmark --methods`` (the thesis's methods and their
    peers).

    ``impute(data, *, model=None, k=3, seed=0, **learn) -> Imputation``; ``peer`` marks the
    methods analysts use instead of a network (benchmark peers); ``needs`` names an optional
    package (the benchmark skips the method politely without it)."""

    name: str
    label: str
    impute: Callable
    peer: bool = False
    needs: str = ""
    description: str = ""
    options: tuple = ()  # the Options its behaviour takes (Registry.validate)


@dataclass(frozen=True)
class ClustererSpec(Declares):
    """A clustering algorithm of ``cluster --algorithm`` (the clustering analysis runs it).

    ``uses_kernel``: the algorithm clusters a kernel's Gram matrix or feature map.  Its behaviour is one of
    ``gram(K, n_clusters, *, kernel, transform, shift, restarts, seed, init_labels) -> ClusterResult``
    (clusters a Gram matrix; ``abbr`` names it in tables: CC, SC), ``features(Phi, n_clusters, *, seed,
    n_init) -> ClusterResult``
    (clusters the explicit feature map, linear memory), or neither (``auto``: the choice between them).
    Otherwise ``run(data, n_clusters, *, seed, **options)`` clusters the rows itself and returns a dict with
    at least ``labels`` (one int per row) and ``cluster_seconds``."""

    name: str
    label: str
    uses_kernel: bool = True
    run: Callable | None = None
    description: str = ""
    gram: Callable | None = None
    features: Callable | None = None
    abbr: str = ""
    options: tuple = ()  # the Options its behaviour takes (Registry.validate)


@dataclass(frozen=True)
class ClassifierSpec(Declares):
    """A kernel classifier of ``classify --classifier`` (the classification analysis runs it).

    ``proba(Ktr, Kte, dte, ytr, classes, *, k, C, neighbours) -> P`` gives the class probabilities of the test
    rows (columns in ``classes`` order) from the train x train and test x train kernel blocks and the test
    rows' self-similarities ``dte``; ``table_label`` names it in tables with its setting (``str.format`` with
    ``k`` and ``C``)."""

    name: str
    label: str
    proba: Callable
    table_label: str = ""
    description: str = ""
    options: tuple = ()  # the Options its behaviour takes (Registry.validate)


@dataclass(frozen=True)
class CriterionSpec(Declares):
    """A prototype-selection criterion of ``prototypes --criterion``.

    ``criterion(model, data, Phi=None) -> object`` builds the criterion on the rows (``value(indices)`` and
    the greedy swap's ``start(init)`` / ``best_swap``; as the built-in MMD criterion has);
    None for the random baseline (the best of the random starts, no greedy search).  ``streams``: it can
    select from a file read in chunks (its statistics are sums over the rows)."""

    name: str
    label: str
    criterion: Callable | None = None
    description: str = ""
    options: tuple = ()  # the Options its behaviour takes (Registry.validate)
    streams: bool = True  # it selects from a file read in chunks (prototypes --chunksize)

    @property
    def greedy(self) -> bool:
        """True for a criterion the greedy swaps optimise (False: the random baseline)."""
        return self.criterion is not None


def face(package: str, homes: dict) -> tuple:
    """The PEP 562 hooks of a package face: ``homes`` maps each public name to the module of ``package`` that
    defines it, imported on first use (so that importing a package loads none of its numerical modules).

    Returns ``(__getattr__, __dir__)`` for the package's ``__init__``; a name that is not public is tried as a
    submodule, so ``package.module`` works without importing it first."""

    def __getattr__(name: str):
        module = sys.modules[package]
        if name in homes:
            value = getattr(importlib.import_module(f"{package}.{homes[name]}"), name)
        else:
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module '{package}' has no attribute '{name}'") from None
        setattr(module, name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(homes))

    return __getattr__, __dir__


@dataclass(frozen=True)
class Lazy:
    """``module.name(*args, ...)`` as a callable that imports ``module`` on its first call: how a light member
    declaration carries its behaviour without importing it (picklable, compared by what it names).

    Attributes
    ----------
    module : the absolute name of the module that defines the behaviour (in the member's own package).
    name : the function's name there.
    args : leading positional arguments bound to every call (e.g. a similarity measure's name).
    """

    module: str
    name: str
    args: tuple = ()

    def __call__(self, *args, **kwargs):
        return getattr(importlib.import_module(self.module), self.name)(*self.args, *args, **kwargs)

    @property
    def __name__(self) -> str:
        return self.name

    def resolve(self) -> Callable:
        """The function itself (imports its module)."""
        return getattr(importlib.import_module(self.module), self.name)


def lazy(module: str, name: str, *args) -> Lazy:
    """``module.name`` as a callable that imports ``module`` on its first call (:class:`Lazy`); ``args`` are
    bound before the caller's positional arguments."""
    return Lazy(module, name, tuple(args))


#: what the faces hand every kernel's ``fit`` (a kernel without a network ignores them)
KERNEL_CONTEXT = (
    "model",
    "dag",
    "recipe",
    "structure",
    "score",
    "params",
    "seed",
    "progress",
    "runner",
    "n_clusters",
)
KERNELS = Registry("kernel", KernelError, KERNEL_CONTEXT)
LEARNERS = Registry("structure-learning method", StructureError)
SCORES = Registry("score", StructureError, (ESS,))
ESTIMATORS = Registry("parameter method", ModelError)
#: what the learning entry point hands every missing-data method besides its own options: the search's
#: options (checked there too) and what a search is given
MISSING_DATA = Registry(
    "missing-data method",
    StructureError,
    (*LEARNING_OPTIONS.values(), ESS, "class_column", "score_options", "scorer", "progress"),
)
IMPUTERS = Registry("imputation method", BnfkError, tuple(IMPUTE_OPTIONS.values()))
CLUSTERERS = Registry("clustering algorithm", BnfkError, tuple(CLUSTER_OPTIONS.values()))
CLASSIFIERS = Registry("classifier", BnfkError, tuple(CLASSIFY_OPTIONS.values()))
CRITERIA = Registry("prototype criterion", PrototypeError, tuple(PROTOTYPE_OPTIONS.values()))


def feature_learners() -> tuple:
    """Structure-learning methods that do not need the class as a node (networks over features only)."""
    return LEARNERS.names(needs_class=False)


def kernel_abbr(name: str) -> str:
    """The short name of a kernel (``F``, ``SH``, ``H``, ...) for table columns such as ``CC-F``."""
    return KERNELS[name].abbr
