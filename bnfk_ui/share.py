"""Links and session files: the current view mirrored in ``st.query_params`` (opening the link restores it)
and saved / opened as a bnfk session file (:mod:`bnfk_core.serving.session_files`).

A link holds the dataset (a bundled name; an upload's private id -- 128 random bits, so only a link that
carries it reaches the upload, which stays on the server that saw it; a file's name in the operator's data
folder when that is on), the loading options, the structure (``arcs``: index pairs over the feature
variables, e.g. ``0-3.2-5``), the CPT estimator and every page setting that differs from its
default; nothing in a link or a session file ends in a traceback.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
import urllib.parse

import streamlit as st

from bnfk_core.errors import BnfkError
from bnfk_core.network.dag import DAG
from bnfk_core.registry import ESTIMATORS
from bnfk_core.serving import settings as S
from bnfk_core.serving.serve import echo
from bnfk_core.serving.session_files import DataRef, SessionError, parse_session, session_dict

from . import bigdata, state
from .state import caches, choices, hybrid, messages, structure, tables, uploads

__all__ = [
    "remember_upload",
    "encode_arcs",
    "decode_arcs",
    "view_params",
    "restore",
    "sync",
    "link",
    "session_bytes",
    "session_maker",
    "open_session",
    "MAX_UPLOADS",
    "MAX_UPLOAD_BYTES",
]

#: uploads a server keeps for links, and their bytes in all (the least recently used is forgotten first)
MAX_UPLOADS = 32
MAX_UPLOAD_BYTES = 1024 * 2**20
MAX_PROBLEMS = 6  # a link's problems named in its warning (the rest counted)
_VIEW_KEYS = (
    "num",
    "cat",
    "data",
    "upload",
    "path",
    "class",
    "missing",
    "bins",
    "drop",
    "arcs",
    "learned",
    "cmpb",
    "params",
    "segvars",
    "pvars",
)
_TOKEN = re.compile(r"[0-9a-f]{32}")
_LOCK = threading.Lock()


@st.cache_resource(show_spinner=False)
def _uploads() -> dict:
    """private id (32 hex digits) -> [file name, bytes, last use] of the uploads this server keeps for
    links."""
    return {}


def remember_upload(name: str, content: bytes, token: str | None = None) -> str:
    """Keep an upload for links under a new private id (``secrets.token_hex(16)``: 128 random bits), or under
    ``token`` again; the least recently used uploads are forgotten beyond MAX_UPLOADS / MAX_UPLOAD_BYTES."""
    token = token or secrets.token_hex(16)
    store = _uploads()
    with _LOCK:
        store.pop(token, None)
        store[token] = [name, content, time.monotonic()]
        total = sum(len(v[1]) for v in store.values())
        for old in sorted(store, key=lambda k: store[k][2]):
            if len(store) <= MAX_UPLOADS and total <= MAX_UPLOAD_BYTES:
                break
            if old != token:
                total -= len(store.pop(old)[1])
    return token


def _upload_token(name: str, content: bytes) -> str:
    """This session's private id of its upload (:func:`remember_upload` once per uploaded file)."""
    ss = st.session_state
    saved = ss.get("_upload_token")
    if saved is None or saved[0] is not content:
        ss._upload_token = (content, remember_upload(name, content))
    elif saved[1] not in _uploads():  # forgotten by the server's store: kept again under the same id
        remember_upload(name, content, saved[1])
    return ss._upload_token[1]


def _find_upload(token: str):
    """(name, bytes) of the upload with exactly this private id, else None (no prefixes, no guessing)."""
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        return None
    with _LOCK:
        hit = _uploads().get(token)
        if hit is None:
            return None
        hit[2] = time.monotonic()
        return hit[0], hit[1]


def encode_arcs(dag: DAG, variables) -> str:
    """``u-v`` index pairs (over ``variables``) joined by ``.``: ``0-3.2-5``; empty for no arcs."""
    index = {v: i for i, v in enumerate(variables)}
    return ".".join(f"{index[u]}-{index[v]}" for u, v in dag.sorted_arcs())


def decode_arcs(text: str, variables) -> DAG:
    """The DAG of :func:`encode_arcs` text; ValueError (indices, format) or StructureError (a cycle)."""
    arcs = []
    for part in filter(None, text.split(".")):
        a, sep, b = part.partition("-")
        if not sep or not a.isdigit() or not b.isdigit() or len(a) > 6 or len(b) > 6:
            raise ValueError(f"'{part[:20]}' is not an arc u-v of variable numbers")
        i, j = int(a), int(b)
        if max(i, j) >= len(variables):
            raise ValueError(f"variable number {max(i, j)} is beyond the data's {len(variables)} variables")
        arcs.append((variables[i], variables[j]))
    return DAG(variables, arcs)


def view_params() -> dict:
    """The current view as query parameters (text values; lists for repeated keys)."""
    ss = st.session_state
    p: dict = {}
    if ss.dataset == "upload" and ss.get("upload"):
        p["upload"] = _upload_token(*ss.upload)
    elif ss.dataset == "path":
        p["path"] = choices.server_name()
    else:
        p["data"] = ss.dataset
    p["class"] = ss.class_column or ""
    p["missing"] = ss.missing_policy
    if int(ss.bins) != 4:
        p["bins"] = str(int(ss.bins))
    if ss.drop_columns:
        p["drop"] = list(ss.drop_columns)
    switched = ss.get(hybrid.KINDS_KEY) or {}  # the Data page's number / category switches
    for key, kind in (("num", hybrid.NUMBER), ("cat", hybrid.CATEGORY)):
        cols = [c for c, k in switched.items() if k == kind]
        if cols:
            p[key] = cols
    feats = tables.feature_data().variables
    p["arcs"] = encode_arcs(structure.dag(), feats)
    for key, net in _networks(feats).items():  # the last learned network, Compare's B
        p["cmpb" if key == "compare_b" else key] = encode_arcs(net, feats)
    p["params"] = ss.param_method
    seg_vars = ss.get("seg_vars")
    if seg_vars and all(v in feats for v in seg_vars):  # the Segments lab's variables, in role order
        p["segvars"] = ".".join(str(feats.index(v)) for v in seg_vars)
    pvars = ss.get("seg_preset_vars")
    if pvars and all(v in feats for v in pvars):  # the Structure page's preset variables, in reading order
        p["pvars"] = ".".join(str(feats.index(v)) for v in pvars)
    get, missing = ss.get, object()  # one look-up per setting (a run reads them all)
    values = {k: v for k in S.SETTINGS if (v := get(k, missing)) is not missing}
    for k, v in S.non_default(values).items():
        if k != "param_method":
            p[k] = S.SETTINGS[k].encode(v)
    return p


def restore(params: dict) -> list[str]:
    """Apply query parameters (``{key: [values]}``); what cannot be used is left as it is and described in the
    returned list (one short phrase each)."""
    ss = st.session_state
    one = {k: v[-1] if isinstance(v, list) else v for k, v in params.items()}
    problems: list[str] = []
    data_ok = True
    changes: dict = {}
    handled: set = set()  # settings read with the data (a textbook sample's rows and seed)
    if "upload" in one:
        found = _find_upload(one["upload"])
        if found is None:
            problems.append(
                "its uploaded file is not on this server (a link reaches an upload only with its "
                "private id, while the server keeps it) — upload the file again"
            )
            data_ok = False
        else:
            ss.upload, changes["dataset"] = found, "upload"
            ss._upload_token = (found[1], one["upload"])
    elif "path" in one:
        try:
            ss.server_path, changes["dataset"] = bigdata.server_file(one["path"]), "path"
        except BnfkError as exc:
            problems.append(f"its file on the server cannot be read ({str(exc).rstrip('.')})")
            data_ok = False
    elif "data" in one:
        if one["data"] in choices.catalog():
            changes["dataset"] = one["data"]
        elif choices.textbook_of(one["data"]):  # rows sampled from a textbook network: its rows and seed too
            changes.update(dataset=one["data"], class_column=None, missing_policy="missing")
            for k in ("textbook_rows", "textbook_seed"):
                handled.add(k)
                if k in one:
                    try:
                        changes[k] = S.SETTINGS[k].parse(one[k])
                    except ValueError as exc:
                        problems.append(f"{k} {exc}")
        else:
            problems.append(f"data '{echo(one['data'], 40)}' is not a bundled dataset")
            data_ok = False
    if data_ok:
        if "class" in one:
            changes["class_column"] = one["class"] or None
        if one.get("missing") in ("missing", "category"):
            changes["missing_policy"] = one["missing"]
        elif "missing" in one:
            problems.append("missing must be 'missing' or 'category'")
        if "bins" in one:
            if re.fullmatch(r"[0-9]{1,2}", one["bins"]) and int(one["bins"]) <= 20:
                changes["bins"] = int(one["bins"])
            else:
                problems.append("bins must be a whole number from 0 to 20")
        changes["drop_columns"] = [c for c in params.get("drop", []) if c]
        if changes and not uploads.change_data(**changes):
            problems.append("its data options do not load (see the message above)")
            data_ok = False
        switched = {c: hybrid.NUMBER for c in params.get("num", []) if c}
        switched.update({c: hybrid.CATEGORY for c in params.get("cat", []) if c})
        if data_ok and switched:
            if len(switched) > S.MAX_LIST:
                problems.append(f"num and cat name at most {S.MAX_LIST} columns")
            else:  # names that are no column of numbers are ignored (kinds() reads only those)
                ss[hybrid.KINDS_KEY] = switched
    state.init()
    if data_ok and "arcs" in one:
        try:
            structure.set_dag(
                decode_arcs(one["arcs"], tables.feature_data().variables), "Structure from a link"
            )
        except (ValueError, BnfkError) as exc:
            problems.append(f"its structure cannot be used ({str(exc).rstrip('.')})")
    if data_ok:
        feats = tables.feature_data().variables
        for key, name in (("learned", "last learned network"), ("cmpb", "Compare page's B")):
            if key not in one:
                continue
            try:
                net = decode_arcs(one[key], feats)
            except (ValueError, BnfkError) as exc:
                problems.append(f"its {name} cannot be used ({str(exc).rstrip('.')})")
                continue
            _set_network("compare_b" if key == "cmpb" else key, net)
    for key, target in (("segvars", "seg_vars"), ("pvars", "seg_preset_vars")):
        if not data_ok or key not in one:
            continue
        feats = tables.feature_data().variables
        idx = one[key].split(".")
        if (
            len(idx) <= 6
            and all(i.isdigit() and len(i) < 7 and int(i) < len(feats) for i in idx)
            and len(set(idx)) == len(idx)
        ):
            ss[target] = [feats[int(i)] for i in idx]
            if key == "pvars":
                ss.pop("w_seg_vars", None)  # the widget takes the restored picks
        else:
            problems.append(f"{key} must be up to six different variable numbers joined by '.'")
    if "params" in one:
        if one["params"] in ESTIMATORS:
            ss.param_method = one["params"]
        else:
            problems.append(f"params '{echo(one['params'], 20)}' is not an estimator")
    for k, v in one.items():
        if k in _VIEW_KEYS or k in handled:
            continue
        if k not in S.SETTINGS:
            problems.append(f"'{echo(k, 30)}' is not a setting")
            continue
        try:
            value = S.SETTINGS[k].parse(v)
        except ValueError as exc:
            problems.append(f"{k} {exc}")
            continue
        if _raises_limit(k, value):
            problems.append(f"{k} from a link can only lower the limit (kept at {ss[k]})")
            continue
        ss[k] = value
    return problems


def _raises_limit(key: str, value) -> bool:
    """Whether ``value`` would raise the visitor's limit ``key`` (a link or a session file may only lower
    it; the visitor raises it in the sidebar, up to the operator's ceiling)."""
    if not S.SETTINGS[key].limit:
        return False
    choices.ensure(key)
    return value > st.session_state[key]


def sync() -> dict:
    """Once per browser session, restore the view of the link it was opened with; then (every run) keep the
    address bar's query parameters equal to the current view.  Returns those parameters
    (:func:`view_params`)."""
    ss = st.session_state
    if not ss.get("_link_read"):
        ss._link_read = True
        given = {k: st.query_params.get_all(k) for k in st.query_params}
        if given:
            problems = restore(given)
            if problems:
                shown = [echo(p, 160) for p in problems[:MAX_PROBLEMS]]
                if len(problems) > MAX_PROBLEMS:
                    shown.append(f"and {len(problems) - MAX_PROBLEMS} more")
                st.warning(
                    messages.plain(
                        "Some of this link could not be used and was left at its default: "
                        + "; ".join(shown)
                        + "."
                    )
                )
    want = view_params()
    have = {k: st.query_params.get_all(k) for k in st.query_params}
    if {k: v if isinstance(v, list) else [v] for k, v in want.items()} != have:
        st.query_params.from_dict(want)
    return want


def link(params: dict | None = None) -> str:
    """The address of this view (the page's URL with the current query parameters: ``params`` when this run's
    :func:`sync` already made them, else :func:`view_params`)."""
    base = (st.context.url or "http://localhost:8501/").split("?")[0]
    return f"{base}?{urllib.parse.urlencode(view_params() if params is None else params, doseq=True)}"


def _networks(feats) -> dict:
    """The session's other networks over ``feats`` (``learned``: when it differs from the current one;
    ``compare_b``: when B was set on the Compare page)."""
    from .state import compare  # the Compare page's state (imported late: it loads the comparison machinery)

    ss, out = st.session_state, {}
    learned = (ss.get("structure") or {}).get("learned")
    if learned:
        lg = DAG.from_dict(learned)
        if list(lg.nodes) == list(feats) and lg != structure.dag():
            out["learned"] = lg
    stored = ss.get("compare_b")
    if stored and stored[0] == tables.feature_data().fingerprint():
        out["compare_b"] = compare.compare_b()
    return out


def _set_network(name: str, net: DAG) -> None:
    """Make ``net`` the session's ``learned`` network or Compare's B (``compare_b``)."""
    from .state import compare

    ss = st.session_state
    if name == "compare_b":
        compare.set_compare_b(net)
    else:
        s = dict(ss.structure)
        s.update(learned=net.to_dict(), learned_label="learned (from a link or session file)")
        ss.structure = s


def session_bytes() -> bytes:
    """The current analysis as a session file: data reference (or the uploaded CSV), structure, CPTs,
    settings, Compare's B and the last learned network."""
    return session_maker()()


def session_maker():
    """A function of no argument that returns the session file's bytes, with every value it needs read now
    (a download button calls it on a thread that cannot read the session state)."""
    ss = st.session_state
    opts = dict(
        class_column=ss.class_column,
        missing_policy=ss.missing_policy,
        bins=int(ss.bins),
        drop_columns=tuple(ss.drop_columns),
    )
    network = choices.textbook_of(ss.dataset)
    ref = (
        DataRef(name=ss.upload[0], content=ss.upload[1], na_values=ss.get("na_values"), **opts)
        if ss.dataset == "upload"
        else DataRef(
            textbook=network, rows=int(ss.textbook_rows), seed=int(ss.textbook_seed), na_values=None, **opts
        )
        if network
        else DataRef(sample=ss.dataset, na_values=None, **opts)
    )
    args = (
        ref,
        structure.dag(),
        ss.param_method,
        caches.model(),
        S.non_default({k: ss[k] for k in S.SETTINGS if k in ss and k != "param_method"}),
        _networks(tables.feature_data().variables),
        dict(ss.get(hybrid.KINDS_KEY) or {}),
    )
    return lambda: json.dumps(session_dict(*args), indent=1, ensure_ascii=False).encode("utf-8")


#: what a session open may change: restored as it was when the open fails
_OPENED_KEYS = (
    *choices.DEFAULTS,
    "structure",
    "compare_b",
    "pair",
    "_upload_token",
    "_upload_info",
    "pending_data",
    hybrid.KINDS_KEY,
)


def open_session(name: str, content: bytes) -> None:
    """Make a session file the current analysis (data, structure, estimator, settings); a SessionError names
    what is wrong, and the app is left exactly as it was (data, structure and settings)."""
    ss = st.session_state
    missing = object()
    before = {k: ss.get(k, missing) for k in _OPENED_KEYS}
    shown = echo(name, 60)
    try:
        _open(shown, parse_session(content, name))
    except Exception as exc:
        for k, v in before.items():
            if v is missing:
                ss.pop(k, None)
            else:
                ss[k] = v
        if isinstance(exc, BnfkError):
            raise SessionError(echo(str(exc), 240)) from None
        if isinstance(
            exc,
            (
                ValueError,
                TypeError,
                KeyError,
                IndexError,
                AttributeError,
                RecursionError,
                OverflowError,
                UnicodeError,
            ),
        ):  # a malformed file the parser let through
            raise SessionError(f"{shown} is not a bnfk session file this app can open.") from None
        raise


def _open(name: str, s) -> None:
    ss = st.session_state
    ref = s.ref
    sampled = {}
    if ref.textbook is not None:  # rows sampled from a textbook network
        sampled = {"textbook_rows": ref.rows, "textbook_seed": ref.seed}
    elif ref.sample is None:
        ss.upload = (ref.name, ref.content)
        ss._upload_token = (ref.content, remember_upload(ref.name, ref.content))
    if not uploads.change_data(
        dataset=ref.sample or (choices.TEXTBOOK_PREFIX + ref.textbook if ref.textbook else "upload"),
        **sampled,
        class_column=ref.class_column,
        missing_policy=ref.missing_policy,
        bins=ref.bins,
        drop_columns=list(ref.drop_columns),
        na_values=None if ref.sample or ref.textbook else ref.na_values,
    ):
        why = [m for kind, m in ss.pop("flash", []) if kind == "error"]
        raise SessionError(f"The data of {name} do not load in the app" + (f": {why[-1]}" if why else "."))
    state.init()
    ss[hybrid.KINDS_KEY] = dict(s.number_kinds)  # the Data page's switches, before the structure is checked
    structure.set_dag(s.model.dag, f"Structure from {name}")
    for key, net in s.networks.items():
        _set_network(key, net)
    ss.param_method = s.params
    dropped = [
        n.split(": ", 1)[-1].removesuffix("; left out.").removeprefix("Setting ")  # refused when read
        for n in s.notes
    ]
    for k, v in s.settings.items():
        if k == "param_method" or k in sampled:  # the data's own rows and seed were set with the data
            continue
        if k not in S.SETTINGS:
            dropped.append(f"'{echo(k, 30)}' is not a setting")
            continue
        try:
            value = S.SETTINGS[k].parse(v)
        except ValueError as exc:
            dropped.append(f"{echo(k, 30)} {exc}")
            continue
        if _raises_limit(k, value):
            dropped.append(f"{k} from a file can only lower the limit")
            continue
        ss[k] = value
    if dropped:  # every setting the app could not use, named in one warning
        shown = dropped[:MAX_PROBLEMS] + (
            [f"and {len(dropped) - MAX_PROBLEMS} more"] if len(dropped) > MAX_PROBLEMS else []
        )
        messages.flash(
            "warning",
            f"{name}: some settings could not be used and were left at their defaults: "
            + "; ".join(shown)
            + ".",
        )
