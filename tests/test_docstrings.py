"""Public functions document themselves in numpydoc form, with the source of their formula.

Every function of ``bnfk_core.__all__`` has a Parameters and a Returns section; the functions that implement
a formula or an algorithm of a paper name it under References; sections come in numpydoc's order.
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
    """The numpydoc section titles of ``doc`` (a title line followed by a line of dashes as long), in order."""
    lines = doc.splitlines()
    return [lines[i].strip() for i in range(len(lines) - 1)
            if lines[i].strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip())
            and len(lines[i + 1].strip()) == len(lines[i].strip())]


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
    assert re.search(r"\(\d{4}\)|\b(19|20)\d{2}\b|thesis|paper|§|eq\.", refs, re.I), f"{module}.{name}: {refs!r}"
    known = [s for s in found if s in ORDER]
    assert known == sorted(known, key=ORDER.index), f"{module}.{name}: sections out of numpydoc order: {found}"


def test_sections_parser_reads_numpydoc_titles():
    doc = "One line.\n\nParameters\n----------\nx : int\n\nReturns\n-------\nint\n\nNot a title\n---\n"
    assert sections(doc) == ["Parameters", "Returns"]
