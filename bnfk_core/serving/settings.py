"""Every page setting the app keeps in ``st.session_state`` -- one registry with its default and what it may
hold.  Pages read their defaults and option lists from here; a link (``st.query_params``) or a session file
carries the settings that differ from the defaults, and :meth:`Setting.parse` checks each value it reads:
every number is bounded like its widget, so no link or session file can ask for more work than the app's
own controls can (``imp_repeats: 1000000000`` is refused with a sentence naming the setting and its range).
No Streamlit here: the registry is plain data, read by the app's widgets
(through :data:`bnfk_ui.state.choices.DEFAULTS`), by
the session files (:mod:`bnfk_core.serving.session_files`) and by the CLI's ``report``.

:data:`SETTINGS` are the settings the app keeps and shares in links; :data:`REPORT_SETTINGS` adds the
Imputation page's benchmark widgets, which only a session file or ``report --set`` carries."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..data.limits import MEMORY_CEILING_ENV, operator_ceiling_bytes  # noqa: F401 - its name here too
from ..errors import shorten
from ..kernels.members import FISHER, FISHER_NORMALIZED
from ..network.dag import SEGMENT_KINDS
from ..network.textbook import MAX_TEXTBOOK_ROWS
from ..registry import CLUSTERERS, CRITERIA, ESTIMATORS, KERNELS, LEARNERS, SCORES

__all__ = [
    "Setting",
    "SETTINGS",
    "REPORT_SETTINGS",
    "MAX_SEED",
    "ALGORITHMS",
    "TRANSFORMS",
    "CLUSTER_NETWORKS",
    "THESIS_NETWORK",
    "THESIS_RECIPE",
    "COMPARED_FAMILIES",
    "KERNEL_ORDERS",
    "KERNEL_COMPARISONS",
    "PROTOTYPE_SOURCES",
    "PROTOTYPE_CRITERIA",
    "SEGMENT_BASES",
    "MAX_LIST",
    "MAX_NUMBERS",
    "shown_value",
    "defaults",
    "non_default",
    "check_settings",
]

#: Largest seed: the core's seeds are numpy seeds in [0, 2**32 - 1] (as the CLI's ``--seed``).
MAX_SEED = 2**32 - 1

# ---------------------------------------------------------------------- option lists of the pages
#: the clustering algorithms the Clustering page offers and their labels (bnfk_core.registry.CLUSTERERS): the
#: Gram-based ones and those that cluster the rows themselves (lca)
ALGORITHMS = CLUSTERERS.label_view(lambda spec: spec.gram is not None or spec.run is not None)
TRANSFORMS = {
    "shift-min": "K − min K (thesis)",
    "cosine": "cosine-normalised, (1 + cos)/2",
    "rbf": "exp(−d² / median d²), kernel distance",
}
#: the Clustering page's network choice that is the thesis's own: hc on qNML with cNML CPTs (thesis ch. 5)
THESIS_NETWORK = "qnml"
#: the recipe of :data:`THESIS_NETWORK` (as :class:`bnfk_core.learning.recipe.Recipe` fields)
THESIS_RECIPE = {"structure": "hc", "score": "qnml", "params": "cnml"}
CLUSTER_NETWORKS = {
    "current": "Current structure",  # short: a 1280-pixel screen shows the whole label
    THESIS_NETWORK: "hc, qNML + cNML (thesis)",
}
#: the kernel families the Clustering page compares by default
COMPARED_FAMILIES = ("fisher", "baseline")
KERNEL_ORDERS = {
    "class": "by class, clustered inside",
    "cluster": "by hierarchical clustering",
    "data": "as in the data",
}
KERNEL_COMPARISONS = ("empty", "tree", "hc", "learned")  # Fisher kernels of other networks (state.NETWORKS)
#: most values a list setting holds (of names; of numbers)
MAX_LIST, MAX_NUMBERS = 64, 10
PROTOTYPE_SOURCES = {
    "current": "Current structure (Structure page; the class is not a feature)",
    "hc": "Tabu search (hc), BIC, class as a feature (paper Fig. 1)",
    "tan": "TAN (paper Fig. 2)",
    "kdb": "KDB, K = 3 (paper Fig. 3)",
}
PROTOTYPE_CRITERIA = CRITERIA.label_view()  # bnfk_core.registry.CRITERIA
SEGMENT_BASES = {"current": "Current structure", "empty": "Empty network (scaled Hamming)"}


@dataclass(frozen=True)
class Setting:
    """One setting: its ``default`` (whose type is the setting's type), the values it may take (``choices``,
    a callable so that registries read at check time), and bounds ``lo``/``hi`` for numbers."""

    key: str
    default: object
    choices: Callable[[], Iterable] | None = None
    lo: float | None = None
    hi: float | None = None
    #: the registry Option this setting offers (its default, widget range and help), if any
    option: object = None
    #: a limit on the work a visitor may start: a link or session file may lower it, never raise it
    limit: bool = False

    def parse(self, value):
        """``value`` (from JSON, or text from a link) as this setting's type; ValueError says why not (numbers
        out of ``lo``..``hi``, huge or non-finite numbers, wrong types, unknown names, lists over
        MAX_LIST)."""
        kind = type(self.default)
        if kind is bool:
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
                return value.lower() in ("true", "1")
            if isinstance(value, bool):
                return value
            raise ValueError("must be true or false")
        if kind in (int, float):
            return self._number(value, kind)
        allowed = list(self.choices()) if self.choices else None
        if kind is list:
            items = value.split(",") if isinstance(value, str) else value
            if not isinstance(items, list) or len(items) > MAX_LIST:
                raise ValueError(f"must be a list of at most {MAX_LIST} values")
            if self.default and isinstance(self.default[0], float):  # a list of numbers (fractions)
                if len(items) > MAX_NUMBERS:
                    raise ValueError(f"must be a list of at most {MAX_NUMBERS} numbers from {self.range()}")
                return [
                    self._number(v.strip() if isinstance(v, str) else v, float)
                    for v in items
                    if not (isinstance(v, str) and not v.strip())
                ]
            if not all(isinstance(v, str) for v in items):
                raise ValueError("must be a list of names")
            items = [v for v in (s.strip() for s in items) if v]
            bad = [v for v in items if allowed is not None and v not in allowed]
            if bad:
                raise ValueError(f"has unknown value(s) {', '.join(shorten(b, 40) for b in bad[:3])}")
            return items
        if not isinstance(value, str):
            raise ValueError("must be text")
        if allowed is not None and value not in allowed:
            raise ValueError(f"must be one of {', '.join(map(str, allowed))}")
        return value

    def _number(self, value, kind):
        """``value`` as a number of ``kind`` within ``lo``..``hi`` (the range is named when it is not)."""
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(f"must be a number from {self.range()}")
        if isinstance(value, str) and len(value.strip()) > 40:
            raise ValueError(f"must be a number from {self.range()}")
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an int of thousands of digits
            raise ValueError(f"must be a number from {self.range()}") from None
        if not math.isfinite(x) or (kind is int and x != int(x)):
            raise ValueError(
                f"must be {'an integer' if kind is int else 'a finite number'} from {self.range()}"
            )
        if (self.lo is not None and x < self.lo) or (self.hi is not None and x > self.hi):
            raise ValueError(f"must be from {self.range()}")
        return int(x) if kind is int else x

    def range(self) -> str:
        """``lo to hi`` as a message names it."""
        return f"{self._num(self.lo)} to {self._num(self.hi)}"

    @staticmethod
    def _num(x) -> str:
        return "−∞" if x is None else f"{x:g}" if isinstance(x, float) else str(x)

    def encode(self, value) -> str:
        """``value`` as text for a link (lists comma-separated, booleans ``true``/``false``)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, list):
            return ",".join(value)
        return f"{value:g}" if isinstance(value, float) else str(value)


def _s(key, default, choices=None, lo=None, hi=None) -> Setting:
    return Setting(key, default, choices, lo, hi)


def _declared(key, registry, member: str, name: str) -> Setting:
    """The setting ``key`` of member ``member``'s option ``name``: its default and its widget's range as the
    registry declares them (:class:`bnfk_core.registry.Option`)."""
    option = registry[member].option(name)
    lo, hi, _step = option.ui_range
    return Setting(key, option.default, None, lo, hi, option)


_SEED = dict(lo=0, hi=MAX_SEED)
#: key -> Setting, in page order
SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        # Structure page
        _s("learn_method", "tree", lambda: LEARNERS),
        _s("learn_score", "bic", lambda: SCORES),
        _s("learn_k", 2, lo=0, hi=5),
        _s("learn_max_parents", 0, lo=0, hi=10),
        _s("learn_seed", 0, **_SEED),
        _s("param_method", "bdeu", lambda: ESTIMATORS),
        # Kernel page
        _s("kernel_kind", FISHER, lambda: KERNELS),
        _s("kernel_rows", 500, lo=2, hi=2000),
        _s("kernel_seed", 0, **_SEED),
        _s("kernel_order", "class", lambda: KERNEL_ORDERS),
        _s("kernel_normalize", False),
        _declared("kernel_alpha", KERNELS, FISHER_NORMALIZED, "alpha"),  # the normalised kernel's power
        _s("kernel_compare", "empty", lambda: (*KERNEL_COMPARISONS, *KERNELS.names(uses_network=False))),
        # Clustering page
        _s("clu_kernel", FISHER, lambda: KERNELS),
        _s("clu_algorithm", "correlation", lambda: ALGORITHMS),
        _s("clu_network", "current", lambda: CLUSTER_NETWORKS),
        _s("clu_transform", "shift-min", lambda: TRANSFORMS),
        _s("clu_restarts", 25, lo=1, hi=200),
        _s("clu_seed", 0, **_SEED),
        _s("clu_rows", 1000, lo=2, hi=3000),
        _s("clu_k", 0, lo=0, hi=200),
        _s("clu_runs", 3, lo=1, hi=20),
        _declared("clu_alpha", KERNELS, FISHER_NORMALIZED, "alpha"),
        _s(
            "clu_kernels",
            [n for n in KERNELS if KERNELS[n].family in COMPARED_FAMILIES],
            lambda: KERNELS,
        ),
        _s("clu_clf_repeats", 5, lo=1, hi=20),
        # Prototypes page
        _s("proto_source", "current", lambda: PROTOTYPE_SOURCES),
        _s("proto_criterion", "mmd", lambda: PROTOTYPE_CRITERIA),
        _s("proto_k", 20, lo=1, hi=100_000),
        _s("proto_draws", 200, lo=10, hi=2000),
        _s("proto_seed", 0, **_SEED),
        # Segments lab
        _s("seg_kind", "single-arc", lambda: SEGMENT_KINDS),
        _s("seg_base", "current", lambda: SEGMENT_BASES),
        _s("seg_rows", 300, lo=20, hi=1500),
        _s("seg_seed", 0, **_SEED),
        _s("seg_restarts", 25, lo=1, hi=100),
        _s("seg_missing", 0.2, lo=0.05, hi=0.5),
        _s("seg_protos", 20, lo=2, hi=200),
        _s("seg_arcs", 2, lo=1, hi=5),
        _s("seg_full_m", 3, lo=2, hi=6),
        # Data page: large files (a path on the server, or an upload with more than stream_rows rows) are read
        # in chunks and fitted on all rows; the pages that work on rows use a seeded sample of view_rows of
        # them
        _s("stream_rows", 100_000, lo=100, hi=10**9),
        _s("view_rows", 2000, lo=100, hi=20_000),
        _s("view_seed", 0, **_SEED),
        # Home and Data pages: the rows sampled from a textbook network (dataset "textbook:<name>") and their
        # seed
        _s("textbook_rows", 2000, lo=10, hi=MAX_TEXTBOOK_ROWS),
        _s("textbook_seed", 0, **_SEED),
        # every page
        Setting("memory_gib", 4.0, None, 0.25, 64.0, limit=True),
    )
}


def _imputation_methods():
    from ..analyses.impute.core import (
        METHODS,
    )  # imported when checked: the analyses are not needed to import this

    return METHODS


#: the settings the report reads beyond SETTINGS: the Imputation page's benchmark widgets, bounded like them
#: (repeats 1..20, seed 0..10**6, fractions strictly between 0 and 1, rows from 2)
REPORT_SETTINGS: dict[str, Setting] = {
    **SETTINGS,
    **{
        s.key: s
        for s in (
            _s("imp_methods", ["bn", "mode", "wknn"], _imputation_methods),
            _s("imp_structure", "tree", lambda: ("auto", *LEARNERS)),
            _s("imp_test", [0.1, 0.3, 0.5], lo=0.01, hi=0.99),
            _s("imp_missing", [0.1, 0.3, 0.5], lo=0.01, hi=0.99),
            _s("imp_repeats", 1, lo=1, hi=20),
            _s("imp_seed", 0, lo=0, hi=10**6),
            # the benchmark's rows (a seeded sample; the page clamps it to the table's rows, at most
            # stream_rows)
            _s("imp_rows", 500, lo=2, hi=SETTINGS["stream_rows"].hi),
        )
    },
}


def check_settings(values: dict, registry: dict | None = None) -> tuple[dict, list[str]]:
    """``values`` with every key of ``registry`` (default :data:`REPORT_SETTINGS`) parsed by its
    :class:`Setting`, and one sentence per value refused (the setting, the value cut to ~40 characters, what
    it must be); refused values are left out, other keys are kept as they are."""
    registry = REPORT_SETTINGS if registry is None else registry
    out, notes = {}, []
    for k, v in values.items():
        if k not in registry or v is None:
            out[k] = v
            continue
        try:
            out[k] = registry[k].parse(v)
        except ValueError as exc:
            notes.append(f"Setting {shorten(k, 40)} = {shown_value(v)} {exc}")
    return out, notes


def shown_value(value) -> str:
    """``repr(value)`` cut to ~40 characters for a message."""
    try:
        return shorten(repr(value), 40)
    except ValueError:  # an int too long for repr
        return "(a number of thousands of digits)"


def defaults(prefix: str = "") -> dict:
    """``{key: default}`` of the settings whose key starts with ``prefix`` (lists copied)."""
    return {
        k: list(s.default) if isinstance(s.default, list) else s.default
        for k, s in SETTINGS.items()
        if k.startswith(prefix)
    }


def non_default(values: dict) -> dict:
    """The settings in ``values`` that differ from their defaults (what a link or session file carries)."""
    return {k: values[k] for k, s in SETTINGS.items() if k in values and values[k] != s.default}


def memory_ceiling_gib(environ=None) -> float:
    """The highest memory limit a visitor may choose: ``BNFK_MAX_MEMORY_GIB`` when the operator sets it, else
    three quarters of the host's physical memory; never above the setting's own bound (64 GiB) nor below its
    floor.

    Parameters
    ----------
    environ : mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    float
        GiB.
    """
    mem = SETTINGS["memory_gib"]
    ceiling = min(float(mem.hi), operator_ceiling_bytes(environ) / 2**30)
    return max(float(mem.lo), ceiling)
