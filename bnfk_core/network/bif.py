"""The BIF model format (the Bayesian network repository's, pgmpy's and bnlearn's): the names written as BIF
identifiers (:func:`bif_token`, :func:`bif_name`), the writer (:func:`model_to_bif`) and the parser
(:func:`parse_bif`).  Reading and writing model files by path is :mod:`bnfk_core.network.model`'s."""

from __future__ import annotations

import json
import re
import urllib.parse

import numpy as np

from ..errors import ModelError

__all__ = ["bif_token", "bif_name", "model_to_bif", "parse_bif"]


# ---------------------------------------------------------------------- BIF names
#: Characters a BIF token may hold (every BIF reader accepts these in identifiers).
_BIF_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
#: BIF keywords; a name equal to one of them (any case) has its first character escaped.
_BIF_KEYWORDS = frozenset(
    {"network", "variable", "probability", "property", "type", "discrete", "table", "default"}
)
_BIF_ESCAPE = re.compile(r"_x([0-9A-F]*)_")


def bif_token(name: str) -> str:
    """The BIF identifier written for a variable or state ``name`` (the "Model files" encoding).

    Letters, digits and ``_`` are kept; every maximal run of other characters becomes
    ``_x`` + the upper-case hex of its UTF-8 bytes + ``_`` (``"col A"`` -> ``col_x20_A``,
    ``"α"`` -> ``_xCEB1_``).  These characters are escaped too, so that tokens are valid
    identifiers everywhere and the encoding is collision-free: a ``_`` followed by ``x``, a
    leading digit (``"1st"`` -> ``_x31_st``) and the first character of a BIF keyword
    (``"table"`` -> ``_x74_able``).  The empty name is ``_x_``.  Plain names such as
    ``stalk_root`` or ``TRUE`` are unchanged.  :func:`bif_name` inverts it.

    Parameters
    ----------
    name : str

    Returns
    -------
    str
    """
    name = str(name)
    if not name:
        return "_x_"
    keyword = name.lower() in _BIF_KEYWORDS
    out, run = [], []
    for k, c in enumerate(name):
        if (
            c not in _BIF_PLAIN
            or (c == "_" and name[k + 1 : k + 2] == "x")
            or (k == 0 and (c in "0123456789" or keyword))
        ):
            run.append(c)
            continue
        if run:
            out.append(_bif_hex("".join(run)))
            run = []
        out.append(c)
    if run:
        out.append(_bif_hex("".join(run)))
    return "".join(out)


def _bif_hex(run: str) -> str:
    return "_x" + run.encode("utf-8", "surrogatepass").hex().upper() + "_"


def bif_name(token: str) -> str:
    """The name :func:`bif_token` encoded as ``token`` (``bif_name(bif_token(s)) == s``).

    Parameters
    ----------
    token : str

    Returns
    -------
    str
    """
    return _BIF_ESCAPE.sub(lambda m: bytes.fromhex(m.group(1)).decode("utf-8", "surrogatepass"), token)


def _bif_quote(text: str) -> str:
    """A property value: ``text`` URL-quoted (UTF-8, nothing left unquoted but ``A-Za-z0-9_.-~``)."""
    return urllib.parse.quote(text, safe="", errors="surrogatepass")


def _bif_unquote(value: str) -> str:
    return urllib.parse.unquote(value.strip(), errors="surrogatepass")


def model_to_bif(model) -> str:
    """BIF text of ``model``, readable by other BIF readers and read back exactly by
    :func:`bnfk_core.network.formats.read_model`.

    Every variable and state is written as the identifier :func:`bif_token` gives it; when
    that differs from the name, the original is kept in a property other readers ignore:
    ``property bnfk_name = "<URL-quoted name>" ;`` for the variable and
    ``property bnfk_states = "<URL-quoted JSON list>" ;`` for its states.  Probabilities are
    written with ``repr`` (shortest exact round trip of a float).

    Parameters
    ----------
    model : BayesNet

    Returns
    -------
    str
    """
    lines = ["network bnfk {", "}"]
    names = [bif_token(v) for v in model.variables]
    tokens = [[bif_token(s) for s in st] for st in model.states]
    for i, v in enumerate(model.variables):
        lines.append(f"variable {names[i]} {{")
        lines.append(f"  type discrete [ {len(tokens[i])} ] {{ {', '.join(tokens[i])} }};")
        if names[i] != v:
            lines.append(f'  property bnfk_name = "{_bif_quote(v)}" ;')
        if tokens[i] != list(model.states[i]):
            lines.append(f'  property bnfk_states = "{_bif_quote(json.dumps(list(model.states[i])))}" ;')
        lines.append("}")
    fmt = lambda row: ", ".join(repr(float(x)) for x in row)  # noqa: E731
    cards = model.cardinalities
    for i, v in enumerate(model.variables):
        ps = list(model.parents[i])
        t = model.cpts[i]
        if not ps:
            lines += [f"probability ( {names[i]} ) {{", f"  table {fmt(t[0])} ;", "}"]
            continue
        lines.append(f"probability ( {names[i]} | {', '.join(names[p] for p in ps)} ) {{")
        for j, cfg in enumerate(np.ndindex(*[int(cards[p]) for p in ps])):
            labels = ", ".join(tokens[p][c] for p, c in zip(ps, cfg))
            lines.append(f"  ( {labels} ) {fmt(t[j])};")
        lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- BIF parser
_BIF_VAR = re.compile(r"\bvariable\s+([^\s{]+)\s*\{")


def _bif_blocks(text: str):
    """(name, body) of every ``variable NAME { ... }`` block, braces matched."""
    for m in _BIF_VAR.finditer(text):
        depth, k = 1, m.end()
        while depth and k < len(text):
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        yield m.group(1).strip(), text[m.end() : k - 1]


_BIF_TYPE = re.compile(r"type\s+discrete\s*\[\s*(\d+)\s*\]\s*\{(.*?)\}\s*;", re.S)
_BIF_PROP = {
    key: re.compile(rf"property\s+{key}\s*=\s*\"?([^\";]*)\"?\s*;") for key in ("bnfk_name", "bnfk_states")
}
_BIF_PROB = re.compile(r"probability\s*\(\s*([^|)]+?)\s*(?:\|\s*([^)]*?))?\s*\)\s*\{(.*?)\}", re.S)
_BIF_ROW = re.compile(r"\(([^)]*)\)\s*([^;]*);")
_BIF_TABLE = re.compile(r"(?:table|default)\s+([^;]*);")


def _floats(s: str, where: str) -> np.ndarray:
    try:
        return np.array([float(t) for t in re.split(r"[\s,]+", s.strip()) if t], dtype=float)
    except ValueError:
        raise ModelError(f"{where} holds a value that is not a number.") from None


def parse_bif(text: str, source: str) -> tuple:
    """Parse BIF (the format of the Bayesian network repository and pgmpy/bnlearn exports).

    Conditional tables are read from their per-configuration lines ``(a, b) p1, p2, ...;``
    (a ``table`` line lists child-major values, as pgmpy writes them).  Names come from the
    ``bnfk_name``/``bnfk_states`` properties when present (files written by bnfk), else
    the tokens are the names (files written by other tools).  Returns ``(names, arcs, states, cpts,
    fit_info)``, from which :func:`bnfk_core.network.formats.read_model` builds the model.

    Parameters
    ----------
    text : str
        The file's text.
    source : str
        The file's name, for messages.

    Returns
    -------
    tuple
        ``(names, arcs, states, cpts, fit_info)``.

    Raises
    ------
    ModelError
        No variables, a variable declared twice, without ``type discrete`` or without a table, an unknown
        variable or state, a table of the wrong size or a value that is not a number, named with the file.

    References
    ----------
    The Interchange Format for Bayesian Networks (BIF), as used by the Bayesian network repository, bnlearn
    and pgmpy.
    """
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    tokens, names, states, labels = [], [], [], []
    for token, body in _bif_blocks(text):
        name = token
        pm = _BIF_PROP["bnfk_name"].search(body)
        if pm:
            name = _bif_unquote(pm.group(1))
        t = _BIF_TYPE.search(body)
        if not t:
            raise ModelError(f"{source}: variable '{name}' has no 'type discrete' declaration.")
        toks = [s.strip() for s in t.group(2).split(",") if s.strip()]
        if len(toks) != int(t.group(1)):
            raise ModelError(
                f"{source}: variable '{name}' declares {t.group(1)} states but lists {len(toks)}."
            )
        shown = toks
        pm = _BIF_PROP["bnfk_states"].search(body)
        if pm:
            try:
                orig = json.loads(_bif_unquote(pm.group(1)))
            except ValueError:
                raise ModelError(
                    f"{source}: the bnfk_states property of variable '{name}' is not a URL-quoted JSON list."
                ) from None
            if not isinstance(orig, list) or len(orig) != len(toks):
                raise ModelError(
                    f"{source}: the bnfk_states property of variable '{name}' does not "
                    f"list its {len(toks)} states."
                )
            shown = [str(s) for s in orig]
        tokens.append(token)
        names.append(name)
        labels.append(toks)
        states.append(tuple(shown))
    if not names:
        raise ModelError(f"{source} declares no variables; is it a BIF file?")
    index = {v: i for i, v in enumerate(tokens)}
    if len(index) != len(tokens):
        dup = next(v for v in tokens if tokens.count(v) > 1)
        raise ModelError(f"{source} declares variable '{dup}' twice.")
    cards = [len(s) for s in states]
    parents_of, tables = {}, {}
    for m in _BIF_PROB.finditer(text):
        child = m.group(1).strip()
        ps = [p.strip() for p in (m.group(2) or "").split(",") if p.strip()]
        for v in [child] + ps:
            if v not in index:
                raise ModelError(f"{source}: a probability block names unknown variable '{v}'.")
        where = f"{source}: the table of '{names[index[child]]}'"
        r = cards[index[child]]
        pcards = [cards[index[p]] for p in ps]
        q = int(np.prod(pcards)) if ps else 1
        t = np.full((q, r), np.nan)
        body = m.group(3)
        for row in _BIF_ROW.finditer(body):
            cfg = [c.strip() for c in row.group(1).split(",")]
            if len(cfg) != len(ps):
                raise ModelError(f"{where} has a row with {len(cfg)} parent values, expected {len(ps)}.")
            try:
                j = (
                    int(np.ravel_multi_index([labels[index[p]].index(c) for p, c in zip(ps, cfg)], pcards))
                    if ps
                    else 0
                )
            except ValueError:
                raise ModelError(f"{where} names an unknown parent state in ({', '.join(cfg)}).") from None
            vals = _floats(row.group(2), where)
            if len(vals) != r:
                raise ModelError(f"{where} has a row with {len(vals)} probabilities, expected {r}.")
            t[j] = vals
        tab = _BIF_TABLE.search(_BIF_ROW.sub("", body))
        if tab is not None and np.isnan(t).any():
            vals = _floats(tab.group(1), where)
            if len(vals) == r and ps and "default" in body:
                t[np.isnan(t).any(axis=1)] = vals
            elif len(vals) == q * r:
                t = vals.reshape(r, q).T
            else:
                raise ModelError(f"{where} has {len(vals)} values, expected {q * r}.")
        if np.isnan(t).any():
            raise ModelError(f"{where} is incomplete.")
        parents_of[child], tables[child] = ps, t
    missing = [names[i] for i, v in enumerate(tokens) if v not in tables]
    if missing:
        raise ModelError(f"{source}: variable '{missing[0]}' has no probability table.")
    arcs = [(names[index[p]], names[i]) for i, v in enumerate(tokens) for p in parents_of[v]]
    cpts = []
    for i, v in enumerate(tokens):
        declared = [index[p] for p in parents_of[v]]
        want = sorted(set(declared))
        t = tables[v]
        if len(want) == len(declared) and declared != want:
            t = t.reshape([cards[p] for p in declared] + [cards[i]])
            t = np.transpose(t, [declared.index(p) for p in want] + [len(declared)]).reshape(-1, cards[i])
        cpts.append(np.ascontiguousarray(t))
    return names, arcs, states, cpts, {"method": "imported"}
