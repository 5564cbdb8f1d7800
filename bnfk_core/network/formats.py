"""Model file formats, with their CPTs: BIF, XMLBIF, Hugin NET, XDSL (GeNIe) and bnfk JSON.

One table says which extension is which format (:data:`MODEL_FORMATS`); :func:`format_of` reads a format
off a file name, :func:`sniff_format` off a file's text (a buffer or an upload has no trustworthy name);
:func:`model_to_text` writes a model in a format and :func:`model_from_text` reads one; :func:`read_model` and
:func:`write_model` do so by path or buffer (with the path checks of :mod:`bnfk_core.data.files`), and
:func:`read_structure` reads a DAG from a model or structure file.

Names.  Every variable and state is written as the identifier :func:`bnfk_core.network.bif.bif_token` gives it
(letters, digits and ``_``, collision-free), so that every reader of the format accepts it; when a name
differs from its token the original is kept where other readers ignore it -- BIF's and NET's
``bnfk_name``/``bnfk_states`` properties, XMLBIF's ``PROPERTY`` elements, the ``genie`` extension of XDSL --
and read back exactly.

Tables.  In all four text formats a table lists, for each parent configuration (the first parent declared
varying slowest), the child's probabilities; they are brought to our layout (parents in node order) when read.
Probabilities are written with ``repr`` (the shortest text that reads back as the same float).

The readers are ours (the standard library's ``xml.etree`` and regular expressions), not pgmpy's: importing
``pgmpy.readwrite`` takes seconds, its NET reader rescans the file once per node (a second on alarm) and reads
no quoted state with a space, its XMLBIF reader fails on a ``PROPERTY`` without ``=``; pgmpy's writers round
NET tables to 8 decimals, give XDSL nodes random positions and sort XMLBIF's variables.  The tests check both
ways against pgmpy's readers and writers.
"""

from __future__ import annotations

import io
import json
import os
import re
import urllib.parse
import xml.etree.ElementTree as ET

import numpy as np

from ..data.files import NOT_FOUND, not_regular_message, open_regular, regular_file_problem
from ..errors import BnfkError, ModelError
from .bif import bif_token, model_to_bif, parse_bif
from .dag import DAG
from .model import BayesNet

__all__ = [
    "MODEL_FORMATS",
    "MODEL_EXTENSIONS",
    "format_of",
    "sniff_format",
    "model_to_text",
    "model_from_text",
    "read_model",
    "read_structure",
    "write_model",
]

#: format -> (its name in messages, the file extensions that select it; the first is the one written)
MODEL_FORMATS = {
    "bif": ("BIF", (".bif",)),
    "xmlbif": ("XMLBIF", (".xmlbif", ".xml")),
    "net": ("Hugin NET", (".net",)),
    "xdsl": ("XDSL (GeNIe)", (".xdsl",)),
    "json": ("bnfk JSON", (".json",)),
}
#: every extension a model file may have
MODEL_EXTENSIONS = tuple(ext for _, exts in MODEL_FORMATS.values() for ext in exts)

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_KINDS = ", ".join(label for label, _ in MODEL_FORMATS.values())


def format_of(path: str) -> str | None:
    """The format a file name's extension selects (``"model.XDSL"`` -> ``"xdsl"``), else None.

    Parameters
    ----------
    path : str

    Returns
    -------
    str or None
        A key of :data:`MODEL_FORMATS`.
    """
    low = str(path).lower()
    for fmt, (_, exts) in MODEL_FORMATS.items():
        if low.endswith(exts):
            return fmt
    return None


_COMMENTS = re.compile(r"\s+|%[^\n]*|//[^\n]*|/\*.*?\*/", re.S)


def sniff_format(text: str) -> str | None:
    """The format of a model file's text, else None: JSON opens with ``{``; XDSL's root element is
    ``smile`` and XMLBIF's ``BIF``; Hugin NET has ``node`` and ``potential`` blocks; BIF ``variable`` and
    ``probability`` blocks.

    Parameters
    ----------
    text : str

    Returns
    -------
    str or None
        A key of :data:`MODEL_FORMATS`.
    """
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("{"):
        return "json"
    if head.startswith("<"):
        m = re.search(r"<\s*([A-Za-z_][\w.-]*)(?=[\s>/])", re.sub(r"<[?!][^>]*>", "", head[:5000]))
        root = m.group(1).lower() if m else ""
        return {"smile": "xdsl", "bif": "xmlbif", "network": "xmlbif"}.get(root)
    bare = _COMMENTS.sub(" ", head[:200_000])
    if re.search(r"\bpotential\s*\(", bare) or re.match(r"\s*net\s*\{", bare):
        return "net"
    if re.search(r"\b(network|variable|probability)\b", bare[:2000]) or re.search(
        r"\bprobability\s*\(", bare
    ):
        return "bif"
    return None


# ---------------------------------------------------------------------- shared
def _quote(text: str) -> str:
    return urllib.parse.quote(text, safe="", errors="surrogatepass")


def _unquote(text: str) -> str:
    return urllib.parse.unquote(text.strip(), errors="surrogatepass")


def _names(model):
    """(variable tokens, state tokens of every variable): the names as written."""
    tokens = [bif_token(v) for v in model.variables]
    states = [[bif_token(s) for s in st] for st in model.states]
    return tokens, states


def _originals(source: str, what: str, token: str, name_text, states_text, n_states: int):
    """(name, states or None) from a variable's ``bnfk_name``/``bnfk_states`` texts (URL-quoted)."""
    name = _unquote(name_text) if name_text is not None else token
    if states_text is None:
        return name, None
    try:
        orig = json.loads(_unquote(states_text))
    except ValueError:
        orig = None
    if not isinstance(orig, list) or len(orig) != n_states:
        raise ModelError(
            f"{source}: the bnfk_states {what} of variable '{name}' does not list its {n_states} states."
        )
    return name, tuple(str(s) for s in orig)


def _number_list(text, where: str) -> np.ndarray:
    try:
        return np.array([float(t) for t in str(text or "").split()], dtype=float)
    except ValueError:
        raise ModelError(f"{where} holds a value that is not a number.") from None


def _assemble(source, tokens, names, state_tokens, states, parents_of, tables):
    """The model from the file's variables (``tokens``, shown as ``names``), their states, their declared
    parents (tokens, in the file's order) and flat tables (child fastest, the first declared parent
    slowest)."""
    from .model import _build

    index = {}
    for i, t in enumerate(tokens):
        if t in index:
            raise ModelError(f"{source} declares variable '{names[i]}' twice.")
        index[t] = i
    if not tokens:
        raise ModelError(f"{source} declares no variables.")
    cards = [len(s) for s in states]
    for i, st in enumerate(state_tokens):
        if not st:
            raise ModelError(f"{source}: variable '{names[i]}' has no states.")
        if len(set(st)) != len(st) or len(set(states[i])) != len(states[i]):
            raise ModelError(f"{source}: variable '{names[i]}' lists a state twice.")
    arcs, cpts = [], []
    for i, t in enumerate(tokens):
        if t not in tables:
            raise ModelError(f"{source}: variable '{names[i]}' has no probability table.")
        declared = parents_of.get(t, [])
        for p in declared:
            if p not in index:
                raise ModelError(f"{source}: the table of '{names[i]}' names unknown parent '{p}'.")
        if len(set(declared)) != len(declared):
            raise ModelError(f"{source}: the table of '{names[i]}' names a parent twice.")
        ps = [index[p] for p in declared]
        q = int(np.prod([cards[p] for p in ps])) if ps else 1
        flat = tables[t]
        if flat.size != q * cards[i]:
            raise ModelError(
                f"{source}: the table of '{names[i]}' has {flat.size} values, expected {q * cards[i]} "
                f"({q} parent configurations x {cards[i]} states)."
            )
        tab = flat.reshape(q, cards[i])
        want = sorted(ps)
        if ps != want:  # our layout: the parents' axes in node order
            tab = tab.reshape([cards[p] for p in ps] + [cards[i]])
            tab = np.transpose(tab, [ps.index(p) for p in want] + [len(ps)]).reshape(q, cards[i])
        arcs += [(names[p], names[i]) for p in ps]
        cpts.append(np.ascontiguousarray(tab, dtype=float))
    return _build(source, names, arcs, [tuple(s) for s in states], cpts, {"method": "imported"})


def _fmt(values) -> str:
    return " ".join(repr(float(x)) for x in np.ravel(values))


def _xml_root(text: str, source: str, label: str):
    text = re.sub(r"\A\s*<\?xml[^>]*\?>", "", text.lstrip("\ufeff"))  # the text is decoded already
    try:
        return ET.fromstring(text)
    except ET.ParseError as exc:
        raise ModelError(f"{source} is not a well-formed {label} file ({exc}).") from None


def _xml_text(root) -> str:
    ET.indent(root, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _child_text(elem, tag: str) -> str | None:
    found = elem.find(tag)
    return None if found is None or found.text is None else found.text.strip()


# ---------------------------------------------------------------------- XMLBIF
def _xmlbif_text(model) -> str:
    tokens, states = _names(model)
    root = ET.Element("BIF", VERSION="0.3")
    net = ET.SubElement(root, "NETWORK")
    ET.SubElement(net, "NAME").text = "bnfk"
    for i, v in enumerate(model.variables):
        var = ET.SubElement(net, "VARIABLE", TYPE="nature")
        ET.SubElement(var, "NAME").text = tokens[i]
        for s in states[i]:
            ET.SubElement(var, "OUTCOME").text = s
        if tokens[i] != v:
            ET.SubElement(var, "PROPERTY").text = f"bnfk_name = {_quote(v)}"
        if states[i] != list(model.states[i]):
            ET.SubElement(var, "PROPERTY").text = f"bnfk_states = {_quote(json.dumps(list(model.states[i])))}"
    for i in range(model.n_vars):
        d = ET.SubElement(net, "DEFINITION")
        ET.SubElement(d, "FOR").text = tokens[i]
        for p in model.parents[i]:
            ET.SubElement(d, "GIVEN").text = tokens[p]
        ET.SubElement(d, "TABLE").text = _fmt(model.cpts[i])
    return _xml_text(root)


def _xmlbif_model(text: str, source: str):
    root = _xml_root(text, source, "XMLBIF")
    net = root if root.tag == "NETWORK" else root.find("NETWORK")
    if net is None:
        raise ModelError(f"{source} is not an XMLBIF file (no NETWORK element).")
    tokens, names, state_tokens, states = [], [], [], []
    for k, var in enumerate(net.findall("VARIABLE")):
        token = _child_text(var, "NAME")
        if not token:
            raise ModelError(f"{source}: VARIABLE number {k + 1} has no NAME.")
        if (var.get("TYPE") or "nature").lower() != "nature":
            raise ModelError(
                f"{source}: variable '{token}' is a {var.get('TYPE')} node; "
                "bnfk reads chance (nature) nodes only."
            )
        outs = [(o.text or "").strip() for o in var.findall("OUTCOME")]
        props = {}
        for p in var.findall("PROPERTY"):
            key, eq, value = (p.text or "").partition("=")
            if eq:
                props[key.strip()] = value
        name, orig = _originals(
            source, "property", token, props.get("bnfk_name"), props.get("bnfk_states"), len(outs)
        )
        tokens.append(token)
        names.append(name)
        state_tokens.append(outs)
        states.append(orig or tuple(outs))
    parents_of, tables = {}, {}
    for d in net.findall("DEFINITION"):
        child = _child_text(d, "FOR")
        if child not in tokens:
            raise ModelError(f"{source}: a DEFINITION is for unknown variable '{child}'.")
        where = f"{source}: the table of '{names[tokens.index(child)]}'"
        if child in tables:
            raise ModelError(f"{where} is defined twice.")
        parents_of[child] = [(g.text or "").strip() for g in d.findall("GIVEN")]
        tab = d.find("TABLE")
        if tab is None:
            raise ModelError(f"{where} is missing (no TABLE).")
        tables[child] = _number_list(tab.text, where)
    return _assemble(source, tokens, names, state_tokens, states, parents_of, tables)


# ---------------------------------------------------------------------- XDSL
def _xdsl_text(model) -> str:
    from .layout import layered_layout

    tokens, states = _names(model)
    root = ET.Element("smile", version="1.0", id="bnfk", numsamples="10000", discsamples="10000")
    nodes = ET.SubElement(root, "nodes")
    order = model.dag.topological_order()  # GeNIe needs every parent listed before its children
    for i in order:
        cpt = ET.SubElement(nodes, "cpt", id=tokens[i])
        for s in states[i]:
            ET.SubElement(cpt, "state", id=s)
        if model.parents[i]:
            ET.SubElement(cpt, "parents").text = " ".join(tokens[p] for p in model.parents[i])
        ET.SubElement(cpt, "probabilities").text = _fmt(model.cpts[i])
    ext = ET.SubElement(root, "extensions")
    genie = ET.SubElement(ext, "genie", version="1.0", app="bnfk", name="bnfk")
    pos = layered_layout(model.variables, model.dag.sorted_arcs())
    for i in order:
        v = model.variables[i]
        node = ET.SubElement(genie, "node", id=tokens[i])
        ET.SubElement(node, "name").text = _NOT_XML.sub("\ufffd", v)
        ET.SubElement(node, "interior", color="e5f6f7")
        ET.SubElement(node, "outline", color="000080")
        ET.SubElement(node, "font", color="000000", name="Arial", size="8")
        x, y = pos[v]
        x0, y0 = int(round(400 + 120 * x)), int(round(40 - 100 * y))
        ET.SubElement(node, "position").text = f"{x0} {y0} {x0 + 90} {y0 + 40}"
        kept = [f"bnfk_name = {_quote(v)}"] if tokens[i] != v else []
        if states[i] != list(model.states[i]):
            kept.append(f"bnfk_states = {_quote(json.dumps(list(model.states[i])))}")
        if kept:
            ET.SubElement(node, "comment").text = "\n".join(kept)
    return _xml_text(root)


def _xdsl_model(text: str, source: str):
    root = _xml_root(text, source, "XDSL")
    nodes = root.find("nodes")
    if root.tag != "smile" or nodes is None:
        raise ModelError(f"{source} is not an XDSL file (no smile element with nodes).")
    ours = {}
    genie = root.find("extensions/genie")
    if genie is not None and genie.get("app") == "bnfk":  # written by bnfk: the original names are kept
        for node in genie.findall("node"):
            kept = dict(re.findall(r"(bnfk_name|bnfk_states) = (\S+)", _child_text(node, "comment") or ""))
            ours[node.get("id")] = (kept.get("bnfk_name"), kept.get("bnfk_states"))
    tokens, names, state_tokens, states, parents_of, tables = [], [], [], [], {}, {}
    for node in nodes:
        token = node.get("id")
        if not token:
            raise ModelError(f"{source}: a node of the XDSL file has no id.")
        if node.tag not in ("cpt", "deterministic"):
            raise ModelError(
                f"{source}: node '{token}' is a {node.tag} node; bnfk reads cpt and deterministic nodes only."
            )
        outs = [s.get("id") or "" for s in node.findall("state")]
        name_text, states_text = ours.get(token, (None, None))
        name, orig = _originals(source, "comment", token, name_text, states_text, len(outs))
        tokens.append(token)
        names.append(name)
        state_tokens.append(outs)
        states.append(orig or tuple(outs))
        parents_of[token] = (_child_text(node, "parents") or "").split()
        where = f"{source}: the table of '{name}'"
        if node.tag == "cpt":
            probs = node.find("probabilities")
            if probs is None:
                raise ModelError(f"{where} is missing (no probabilities).")
            tables[token] = _number_list(probs.text, where)
        else:  # one resulting state per parent configuration: a 0/1 table
            result = (_child_text(node, "resultingstates") or "").split()
            unknown = [s for s in result if s not in outs]
            if unknown:
                raise ModelError(f"{where} names unknown resulting state '{unknown[0]}'.")
            tab = np.zeros((len(result), len(outs)))
            tab[np.arange(len(result)), [outs.index(s) for s in result]] = 1.0
            tables[token] = tab.ravel()
    return _assemble(source, tokens, names, state_tokens, states, parents_of, tables)


# ---------------------------------------------------------------------- Hugin NET
def _net_text(model) -> str:
    tokens, states = _names(model)
    out = ["net", "{", "}"]
    for i, v in enumerate(model.variables):
        out += [f"node {tokens[i]}", "{", "    states = (" + " ".join(f'"{s}"' for s in states[i]) + ");"]
        if tokens[i] != v:
            out.append(f'    bnfk_name = "{_quote(v)}";')
        if states[i] != list(model.states[i]):
            out.append(f'    bnfk_states = "{_quote(json.dumps(list(model.states[i])))}";')
        out.append("}")
    cards = model.cardinalities
    for i in range(model.n_vars):
        ps = list(model.parents[i])
        head = tokens[i] + (" | " + " ".join(tokens[p] for p in ps) if ps else "")
        t = model.cpts[i].reshape([int(cards[p]) for p in ps] + [int(cards[i])])
        out += [f"potential ({head})", "{", f"    data = {_net_nested(t)};", "}"]
    return "\n".join(out) + "\n"


def _net_nested(t: np.ndarray) -> str:
    if t.ndim == 1:
        return "(" + " ".join(repr(float(x)) for x in t) + ")"
    return "(" + " ".join(_net_nested(s) for s in t) + ")"


_NET_TOKEN = re.compile(
    r'\s+|%[^\n]*|//[^\n]*|/\*.*?\*/|"((?:[^"\\]|\\.)*)"|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)'
    r"|([A-Za-z_][\w.-]*)|([{}()=;|,])",
    re.S,
)


def _net_tokens(text: str, source: str) -> list:
    """(kind, value) tokens of Hugin NET text: ``s`` string, ``n`` number, ``w`` word, ``p`` punctuation."""
    out, k = [], 0
    while k < len(text):
        m = _NET_TOKEN.match(text, k)
        if m is None:
            line = text.count("\n", 0, k) + 1
            raise ModelError(f"{source}, line {line}: unexpected character {text[k]!r} in a Hugin NET file.")
        k = m.end()
        if m.group(1) is not None:
            out.append(("s", re.sub(r"\\(.)", r"\1", m.group(1))))
        elif m.group(2) is not None:
            out.append(("n", m.group(2)))
        elif m.group(3) is not None:
            out.append(("w", m.group(3)))
        elif m.group(4) is not None:
            out.append(("p", m.group(4)))
    return out


class _NetParser:
    """A recursive-descent reader of the Hugin NET grammar's discrete part (the net, node and potential
    blocks; attributes as ``name = value;``, values strings, numbers, words or parenthesised lists)."""

    def __init__(self, tokens, source):
        self.t, self.k, self.source = tokens, 0, source

    def peek(self):
        return self.t[self.k] if self.k < len(self.t) else ("", "")

    def take(self, value=None, what=None):
        tok = self.peek()
        if not tok[0] or (value is not None and tok[1] != value):
            seen = f"'{tok[1]}'" if tok[0] else "the end of the file"
            raise ModelError(
                f"{self.source}: expected {what or repr(value)} in the Hugin NET file, found {seen}."
            )
        self.k += 1
        return tok

    def value(self):
        kind, v = self.take(what="a value")
        if kind == "p" and v == "(":
            items = []
            while self.peek()[1] != ")":
                items.append(self.value())
                if self.peek()[1] == ",":
                    self.k += 1
            self.take(")")
            return items
        if kind == "p":
            raise ModelError(f"{self.source}: expected a value in the Hugin NET file, found '{v}'.")
        return (kind, v)

    def attributes(self) -> dict:
        self.take("{")
        attrs = {}
        while self.peek()[1] != "}":
            kind, name = self.take(what="an attribute name")
            if kind != "w":
                raise ModelError(
                    f"{self.source}: expected an attribute name in the Hugin NET file, found '{name}'."
                )
            self.take("=")
            attrs[name] = self.value()
            self.take(";")
        self.take("}")
        return attrs

    def words(self, stop):
        out = []
        while self.peek()[1] not in stop:
            kind, v = self.take(what="a node name")
            if kind != "w":
                raise ModelError(f"{self.source}: expected a node name in the Hugin NET file, found '{v}'.")
            out.append(v)
        return out


def _flat(value) -> list:
    if isinstance(value, list):
        return [x for item in value for x in _flat(item)]
    return [value]


def _net_string(value, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, list) or value[0] != "s":
        raise ModelError(f"{where} is not a string.")
    return value[1]


def _net_model(text: str, source: str):
    p = _NetParser(_net_tokens(text, source), source)
    tokens, names, state_tokens, states, parents_of, tables = [], [], [], [], {}, {}
    while p.peek()[0]:
        kind, word = p.take(what="a block")
        if word in ("net", "class"):
            if word == "class":
                raise ModelError(f"{source} is an object-oriented Hugin class; bnfk reads a plain net only.")
            p.attributes()
        elif word in ("node", "discrete", "continuous", "decision", "utility", "function"):
            if word != "node":
                p.take("node")
            token = p.words({"{"})
            if len(token) != 1:
                raise ModelError(f"{source}: a node block needs one name, found {len(token)}.")
            token = token[0]
            if word not in ("node", "discrete"):
                raise ModelError(
                    f"{source}: node '{token}' is a {word} node; bnfk reads discrete chance nodes."
                )
            attrs = p.attributes()
            if "states" not in attrs:
                raise ModelError(f"{source}: node '{token}' has no states.")
            outs = [v[1] for v in _flat(attrs["states"]) if v[0] in ("s", "w", "n")]
            name, orig = _originals(
                source,
                "attribute",
                token,
                _net_string(attrs.get("bnfk_name"), f"{source}: the bnfk_name of node '{token}'"),
                _net_string(attrs.get("bnfk_states"), f"{source}: the bnfk_states of node '{token}'"),
                len(outs),
            )
            tokens.append(token)
            names.append(name)
            state_tokens.append(outs)
            states.append(orig or tuple(outs))
        elif word == "potential":
            p.take("(")
            child = p.words({"|", ")"})
            if len(child) != 1:
                raise ModelError(f"{source}: a potential needs one child before '|', found {len(child)}.")
            ps = []
            if p.peek()[1] == "|":
                p.k += 1
                ps = p.words({")"})
            p.take(")")
            attrs = p.attributes()
            where = f"{source}: the potential of '{child[0]}'"
            if child[0] in tables:
                raise ModelError(f"{where} is given twice.")
            if "data" not in attrs:
                raise ModelError(f"{where} has no data.")
            vals = _flat(attrs["data"])
            if any(v[0] != "n" for v in vals):
                raise ModelError(f"{where} holds a value that is not a number.")
            parents_of[child[0]] = ps
            tables[child[0]] = np.array([float(v[1]) for v in vals], dtype=float)
        else:
            raise ModelError(
                f"{source}: unexpected '{word}' in the Hugin NET file (a net, node or potential block)."
            )
    unknown = [t for t in tables if t not in tokens]
    if unknown:
        raise ModelError(f"{source}: a potential is for unknown node '{unknown[0]}'.")
    return _assemble(source, tokens, names, state_tokens, states, parents_of, tables)


# ---------------------------------------------------------------------- dispatch
def model_to_text(model, fmt: str) -> str:
    """The text of ``model`` in format ``fmt`` (a key of :data:`MODEL_FORMATS`).

    Parameters
    ----------
    model : BayesNet
    fmt : str

    Returns
    -------
    str
        Read back by :func:`model_from_text` with the same variables, states, arcs and CPTs (bit for bit; XDSL
        lists the variables parents first, as GeNIe needs, so their order may change).

    Raises
    ------
    ModelError
        An unknown format.
    """
    if fmt == "json":
        return json.dumps(model.to_json_dict(), indent=1)
    writers = {"bif": model_to_bif, "xmlbif": _xmlbif_text, "net": _net_text, "xdsl": _xdsl_text}
    if fmt not in writers:
        raise ModelError(f"Unknown model format '{fmt}'; choose one of {', '.join(MODEL_FORMATS)}.")
    return writers[fmt](model)


def model_from_text(text: str, source: str = "model", fmt: str | None = None):
    """The model a file's text holds, in format ``fmt`` (default: :func:`sniff_format`'s).

    Parameters
    ----------
    text : str
    source : str
        The file's name, for messages.
    fmt : str, optional
        A key of :data:`MODEL_FORMATS`; a text whose own format is recognisable is read in that format.

    Returns
    -------
    BayesNet

    Raises
    ------
    ModelError
        One sentence naming ``source`` for every malformed file: not well-formed, a variable without states
        or table, an unknown parent or state, a table of the wrong size, a value that is not a number, a cycle
        or a row that is not a distribution.
    """
    fmt = sniff_format(text) or fmt
    if fmt is None:
        raise ModelError(f"{source} is not a model file of a known format ({_KINDS}).")
    if fmt == "json":
        from .model import BayesNet

        stripped = text.lstrip("\ufeff \t\r\n")
        try:
            d = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ModelError(f"{source} is not valid JSON (line {exc.lineno}).") from None
        except (ValueError, RecursionError):  # a number of over 4,300 digits; nesting deeper than the stack
            raise ModelError(
                f"{source} is not a bnfk JSON model (a number too long or nesting too deep)."
            ) from None
        if not isinstance(d, dict):
            raise ModelError(f'{source} is not a bnfk model file (missing "format": "bnfk-model").')
        return BayesNet.from_json_dict(d, source)
    if fmt == "bif":
        from .model import _build

        return _build(source, *parse_bif(text, source))
    readers = {"xmlbif": _xmlbif_model, "net": _net_model, "xdsl": _xdsl_model}
    try:
        return readers[fmt](text, source)
    except BnfkError:
        raise
    except RecursionError:
        raise ModelError(f"{source} nests too deep to be a model file.") from None


# ---------------------------------------------------------------------- files
def write_model(model: BayesNet, path) -> None:
    """Write ``model`` in the format its file name's extension selects, with its CPTs: ``.bif`` (BIF),
    ``.xmlbif`` or ``.xml`` (XMLBIF), ``.net`` (Hugin NET), ``.xdsl`` (GeNIe) or ``.json`` (bnfk JSON)
    (:mod:`bnfk_core.network.formats`).

    Parameters
    ----------
    model : BayesNet
    path : str or os.PathLike
        The file; its extension chooses the format.

    Raises
    ------
    ModelError
        Any other extension.
    """
    path = os.fspath(path)
    fmt = format_of(path)
    if fmt is None:
        raise ModelError(
            f"Cannot write a model to '{path}': use a file name ending in {', '.join(MODEL_EXTENSIONS)}."
        )
    text = model_to_text(model, fmt)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def read_model(path_or_buffer, source: str | None = None) -> BayesNet:
    """Read a model with its CPTs from a BIF, XMLBIF, Hugin NET, XDSL or bnfk-JSON file (path or file-like).

    Parameters
    ----------
    path_or_buffer : str, os.PathLike or file-like
        The file; its text decides the format (:func:`bnfk_core.network.formats.sniff_format`), else its
        extension.
    source : str, optional
        The name used in messages.

    Returns
    -------
    BayesNet

    Raises
    ------
    ModelError
        Every error, with a message that names the file (``source``, else the path, else the buffer's
        ``.name``).
    """
    if hasattr(path_or_buffer, "read"):
        source = source or str(getattr(path_or_buffer, "name", "") or "uploaded model")
        try:
            raw = path_or_buffer.read()
        except (OSError, ValueError) as exc:
            raise ModelError(f"Cannot read model {source}: {exc}.") from None
        text = raw.decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else str(raw)
    else:
        path = os.fspath(path_or_buffer)
        source = source or path
        problem = regular_file_problem(path)
        if problem == NOT_FOUND:
            raise ModelError(f"Model file '{source}' does not exist.")
        if problem is not None:
            raise ModelError("Model file " + not_regular_message(f"'{source}'"))
        try:
            with open_regular(path, "r", encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError as exc:
            raise ModelError(f"Cannot read model file '{source}': {exc.strerror or exc}.") from None
    return model_from_text(text, source, format_of(source))


def read_structure(content: bytes, source: str = "uploaded structure") -> DAG:
    """The DAG of a model file (any format of :func:`read_model`) or of a structure-only JSON
    file (``{"nodes": [...], "arcs": [[u, v], ...]}`` as :meth:`DAG.to_dict` writes it).

    Parameters
    ----------
    content : bytes
    source : str

    Returns
    -------
    DAG
    """
    try:
        d = json.loads(content)
    except (ValueError, RecursionError):  # not JSON; a number of thousands of digits; nesting too deep
        d = None
    if isinstance(d, dict) and "arcs" in d and "cpts" not in d:
        try:
            return DAG.from_dict(d)
        except (KeyError, TypeError, ValueError, BnfkError) as exc:
            raise ModelError(f"{source} is not a valid structure file ({exc}).") from None
    buf = io.BytesIO(content)
    return read_model(buf, source).dag
