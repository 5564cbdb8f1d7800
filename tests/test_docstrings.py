"""Public functions document themselves in numpydoc form, with the source of their formula.

Every function of ``bnfk_core.__all__`` has a Parameters and a Returns section; the functions that implement
a formula or an algorithm of a paper name it under References; sections come in numpydoc's order.

In the subpackages of ``SCOPED`` every public function, class and method defined there has a docstring, a
Parameters section when it takes arguments and a Returns (or Yields) section when it gives a value (``EXEMPT``
lists the exceptions, each with its reason), and every Parameters entry names a parameter of the signature.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import bnfk_core

#: numpydoc's section order (those we use)
ORDER = ("Parameters", "Returns", "Raises", "Notes", "References", "Examples")

#: module -> functions that implement a paper's formula or algorithm and must say where it comes from
WITH_SOURCES = {
    "bnfk_core.kernels.fisher": ["gram", "contributions", "set_kernel", "mmd"],
    "bnfk_core.kernels.features": ["features"],
    "bnfk_core.kernels.hamming": ["scaled_hamming_model"],
    "bnfk_core.kernels.similarity": ["fit_measure"],
    "bnfk_core.inference.queries": ["marginal", "parent_marginals", "posterior", "log_likelihood"],
    "bnfk_core.inference.junction": ["junction_tree"],
    "bnfk_core.network.model": ["fit"],
    "bnfk_core.network.dag": ["covered_arcs", "cpdag", "equivalent", "structural_hamming_distance"],
    "bnfk_core.learning.scores": ["bic", "aic", "k2", "bdeu", "qnml"],
    "bnfk_core.learning.trees": ["chow_liu", "tan", "kdb"],
    "bnfk_core.learning.exact": ["exact_search"],
    "bnfk_core.learning.incomplete": ["learn_network"],
    "bnfk_core.learning.kgv": ["kgv_mutual_information"],
    "bnfk_core.learning.metagraph": ["krawtchouk", "kernel_by_distance", "fit_surrogate"],
    "bnfk_core.lca.model": ["fit_lca"],
    "bnfk_core.data.stats": ["theils_u", "collapse"],
    "bnfk_core.analyses.prototypes.search": ["greedy_swap", "select_prototypes"],
    "bnfk_core.analyses.cluster.metrics": ["clustering_metrics"],
    "bnfk_core.analyses.segments.tables": ["case_table"],
}


def sections(doc: str) -> list[str]:
    """The numpydoc section titles of ``doc`` (a title line followed by a line of dashes as long), in
    order."""
    lines = doc.splitlines()
    return [
        lines[i].strip()
        for i in range(len(lines) - 1)
        if lines[i].strip()
        and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        and len(lines[i + 1].strip()) == len(lines[i].strip())
    ]


def top_functions():
    for name in bnfk_core.__all__:
        obj = getattr(bnfk_core, name)
        if inspect.isfunction(obj):
            yield name, obj


@pytest.mark.parametrize("name, func", list(top_functions()), ids=lambda v: v if isinstance(v, str) else "")
def test_top_face_functions_have_parameters_and_returns(name, func):
    found = sections(inspect.getdoc(func) or "")
    assert "Parameters" in found, f"bnfk_core.{name}: no Parameters section"
    returns_none = inspect.signature(func).return_annotation in (None, "None")
    assert "Returns" in found or returns_none, f"bnfk_core.{name}: no Returns section"


@pytest.mark.parametrize("module, name", [(m, n) for m, ns in WITH_SOURCES.items() for n in ns])
def test_formulas_cite_their_source(module, name):
    func = getattr(importlib.import_module(module), name)
    doc = inspect.getdoc(func) or ""
    found = sections(doc)
    assert "References" in found, f"{module}.{name}: no References section"
    refs = doc.split("References\n----------", 1)[1]
    # a source is a paper (author and year, or the bnfk paper / thesis with a section, equation or table)
    assert re.search(r"\(\d{4}\)|\b(19|20)\d{2}\b|thesis|paper|§|eq\.", refs, re.I), (
        f"{module}.{name}: {refs!r}"
    )
    known = [s for s in found if s in ORDER]
    assert known == sorted(known, key=ORDER.index), (
        f"{module}.{name}: sections out of numpydoc order: {found}"
    )


def test_sections_parser_reads_numpydoc_titles():
    doc = "One line.\n\nParameters\n----------\nx : int\n\nReturns\n-------\nint\n\nNot a title\n---\n"
    assert sections(doc) == ["Parameters", "Returns"]
    assert documented_parameters(doc) == ["x"]
    doc = "S.\n\nParameters\n----------\na, *b : int\n    Text : not a name.\nc\n\nReturns\n-------\nint\n"
    assert documented_parameters(doc) == ["a", "b", "c"]


# --- every public function of the faces below documents itself
# -------------------------------------------------

#: the subpackages whose public functions, classes and methods must carry numpydoc sections
SCOPED = (
    "network",
    "inference",
    "kernels",
    "lca",
    "reproduce",
    "estimators",
    "views",
    "analyses.segments",
    "analyses.prototypes",
)

#: "module:qualname" -> why it needs no Parameters / Returns section
EXEMPT = {
    # a kernel's gram / contributions implement the interface documented on FittedKernel
    **{
        f"bnfk_core.kernels.{name}": "implements the FittedKernel method of that name, documented there"
        for name in (
            "fisher:NetworkKernel.gram",
            "fisher:NetworkKernel.contributions",
            "fisher_normalized:NormalizedFisherKernel.gram",
            "fisher_normalized:NormalizedFisherKernel.contributions",
            "hamming:HammingKernel.gram",
            "hamming:HammingKernel.contributions",
            "similarity:CategoricalMeasure.gram",
            "similarity:CategoricalMeasure.contributions",
        )
    },
    # the greedy-criterion interface (value, values, start, best_swap, swap), documented on MMDCriterion
    **{
        f"bnfk_core.analyses.prototypes.rowwise:ChunkedMMDCriterion.{name}": "implements the greedy-"
        "criterion method of that name, documented on criteria.MMDCriterion"
        for name in ("value", "values", "start", "best_swap", "swap")
    },
}


def _scoped_modules():
    import pkgutil

    for pkg in SCOPED:
        face = importlib.import_module(f"bnfk_core.{pkg}")
        yield face.__name__
        for info in pkgutil.walk_packages(face.__path__, face.__name__ + "."):
            yield info.name


def _gives_a_value(func) -> bool:
    """Whether ``func`` returns something: its annotation, else a ``return <value>`` / ``yield`` of its own
    body."""
    import ast
    import textwrap

    ann = inspect.signature(func).return_annotation
    if ann is not inspect.Signature.empty:
        return ann not in (None, "None")
    body = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]
    stack = list(body.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)) or (
            isinstance(node, ast.Return) and node.value is not None
        ):
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _public_callables():
    """(module:qualname, object, is_method) of every public function, class and method defined in the
    scope."""
    for module in _scoped_modules():
        for name, obj in vars(importlib.import_module(module)).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module:
                continue
            if inspect.isfunction(obj):
                yield f"{module}:{name}", obj, False
            elif inspect.isclass(obj):
                yield f"{module}:{name}", obj, False
                for attr, value in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if isinstance(value, (staticmethod, classmethod)):
                        yield f"{module}:{name}.{attr}", value.__func__, isinstance(value, classmethod)
                    elif inspect.isfunction(value):
                        yield f"{module}:{name}.{attr}", value, True


def _missing(obj, is_method) -> list[str]:
    doc = inspect.getdoc(obj) or ""
    if not doc.strip():
        return ["a docstring"]
    if inspect.isclass(obj):
        return []
    found = sections(doc)
    params = list(inspect.signature(obj).parameters)[1 if is_method else 0 :]
    missing = ["Parameters"] if params and "Parameters" not in found else []
    if _gives_a_value(obj) and not {"Returns", "Yields"} & set(found):
        missing.append("Returns")
    known = [s for s in found if s in ORDER]
    if known != sorted(known, key=ORDER.index):
        missing.append(f"numpydoc order (has {found})")
    return missing


def test_scoped_public_callables_have_numpydoc_sections():
    gaps = [
        f"{key}: no {', '.join(miss)}"
        for key, obj, is_method in _public_callables()
        if key not in EXEMPT and (miss := _missing(obj, is_method))
    ]
    assert not gaps, f"{len(gaps)} undocumented:\n" + "\n".join(gaps)


def documented_parameters(doc: str) -> list[str]:
    """The names a numpydoc Parameters section documents (``a, b : int`` gives both; ``*args`` gives
    ``args``)."""
    lines = doc.splitlines()
    if "Parameters" not in sections(doc):
        return []
    start = (
        next(
            i
            for i in range(len(lines) - 1)
            if lines[i].strip() == "Parameters" and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        )
        + 2
    )
    names = []
    for i in range(start, len(lines)):
        if (
            i + 1 < len(lines)
            and lines[i].strip() in ORDER + ("Yields",)
            and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        ):
            break
        m = re.fullmatch(r"(\*{0,2}\w+(?:, \*{0,2}\w+)*)(?: :.*)?", lines[i])
        if m:
            names += [n.strip().lstrip("*") for n in m.group(1).split(",")]
    return names


def test_documented_parameters_exist():
    """A Parameters entry names a parameter of the signature (a rename must carry its docstring along)."""
    stale = []
    for key, obj, _ in _public_callables():
        if inspect.isclass(obj):
            continue
        params = inspect.signature(obj).parameters
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            continue  # ``**options`` documented by the option names
        unknown = [n for n in documented_parameters(inspect.getdoc(obj) or "") if n not in params]
        if unknown:
            stale.append(f"{key}: {unknown}")
    assert not stale, "Parameters entries that are no parameter:\n" + "\n".join(stale)


def test_exemptions_name_existing_callables_with_a_reason():
    keys = {key for key, _, _ in _public_callables()}
    assert not set(EXEMPT) - keys, f"stale exemptions: {sorted(set(EXEMPT) - keys)}"
    assert all(reason.strip() for reason in EXEMPT.values())


def test_gives_a_value_reads_the_body():
    def f(x):
        def g():
            return 1

        g()

    def h(x):
        if x:
            return x
        return None

    assert not _gives_a_value(f) and _gives_a_value(h)
