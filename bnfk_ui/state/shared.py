"""Work shared by every session of the server: a figure (or any pure result) built once per distinct input.

A class of thirty opens the same pages on the same data and structure; building the same plotly figures again
on every rerun would cost a quarter of a class's server time.  :func:`shared` keys a pure builder's result on
its inputs' content -- arrays by a hash of their bytes, other values as they are -- so that a rerun that
changed nothing, and every other session with the same inputs, gets the figure already built.  The figures
are never changed after they are built (``st.plotly_chart`` copies what it sends).

Keying an array on its content hashes its bytes; the Gram matrices the pages hand to the figures are a
megabyte or more, and hashing them again on every run of every session would be a tenth of a page run's CPU.
An array that cannot change -- read-only, and so is every array it is a view of (the results of :func:`front`
are made so) -- is hashed once: its digest is kept while the array lives.  An array that can change (the
Structure page's live Gram matrix, edited in place) is hashed on every call, or passed as :func:`keyed` with
a key that stands for it.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import inspect
import threading
import weakref
from collections import OrderedDict

import numpy as np

__all__ = ["shared", "content_key", "MAX_SHARED", "front", "frozen", "keyed", "Keyed", "on_miss"]

#: called (once set, by :func:`on_miss`) before a front computes a result it does not hold
_ON_MISS: contextvars.ContextVar = contextvars.ContextVar("bnfk_on_miss", default=None)


def on_miss(hook) -> contextvars.Token:
    """Have ``hook()`` called before any front of this thread computes a result it does not hold yet (a page's
    spinner, shown only when there is work to wait for); returns the token to reset it with
    ``_ON_MISS.reset``."""
    return _ON_MISS.set(hook)


#: results kept (least recently used dropped first); a 500-row heatmap figure is a few MB
MAX_SHARED = 48
_STORE: OrderedDict = OrderedDict()
_LOCK = threading.Lock()


class Keyed:
    """A value handed to a :func:`shared` builder under a key that stands for its content (:func:`keyed`)."""

    __slots__ = ("value", "key")

    def __init__(self, value, key):
        self.value, self.key = value, key


def keyed(value, key) -> Keyed:
    """``value`` for :func:`shared`, keyed by ``key`` instead of its content: the caller promises that equal
    keys stand for equal values (e.g. a session's live Gram matrix keyed by its structure and its own
    digest)."""
    return Keyed(value, key)


#: id(array) -> (weak reference to the array, its digest), for arrays that cannot change
#: (:func:`_unchangeable`)
_DIGESTS: dict = {}


def _unchangeable(a: np.ndarray) -> bool:
    """True when neither ``a`` nor any array it is a view of can be written (so its bytes never change)."""
    x = a
    while isinstance(x, np.ndarray):
        if x.flags.writeable:
            return False
        x = x.base
    return x is None or isinstance(x, bytes)


def _digest(a: np.ndarray) -> str:
    """A hash of the bytes of ``a`` (C order); made once per array that cannot change while it lives."""
    fixed = _unchangeable(a)
    if fixed:
        hit = _DIGESTS.get(id(a))
        if hit is not None and hit[0]() is a:
            return hit[1]
    # SHA-1 as a content key, not for security: with the processor's SHA instructions it hashes a Gram matrix
    # 2.4 times faster than BLAKE2b here (1.0 against 2.4 ms for 1.5 MB)
    digest = hashlib.sha1(np.ascontiguousarray(a).view(np.uint8), usedforsecurity=False).hexdigest()
    if fixed:
        i = id(a)
        _DIGESTS[i] = (weakref.ref(a, lambda _, i=i: _DIGESTS.pop(i, None)), digest)
    return digest


def content_key(value):
    """A hashable key standing for ``value``'s content (arrays by shape, dtype and a hash of their bytes; a
    :class:`Keyed` value by its key)."""
    if isinstance(value, Keyed):
        return ("keyed", value.key)
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            a = np.ascontiguousarray(value)
            return ("nd-object", a.shape, tuple(content_key(x) for x in a.ravel().tolist()))
        return ("nd", value.shape, value.dtype.str, _digest(value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(content_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), content_key(v)) for k, v in value.items())))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(map(repr, value))))
    if isinstance(value, (str, bytes, int, float, bool, type(None), np.generic)):
        return (type(value).__name__, value.item() if isinstance(value, np.generic) else value)
    return ("repr", type(value).__qualname__, repr(value))


def shared(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` for a pure ``fn``, built once per distinct input for the whole server."""
    key = (fn.__module__, fn.__qualname__, content_key(args), content_key(kwargs))
    with _LOCK:
        if key in _STORE:
            _STORE.move_to_end(key)
            return _STORE[key]
    args = tuple(a.value if isinstance(a, Keyed) else a for a in args)
    kwargs = {k: v.value if isinstance(v, Keyed) else v for k, v in kwargs.items()}
    out = fn(*args, **kwargs)
    with _LOCK:
        _STORE[key] = out
        while len(_STORE) > MAX_SHARED:
            _STORE.popitem(last=False)
    return out


class Kept:
    """Results kept for the whole server under explicit keys, the ``size`` most recently used: for a step
    that draws its own progress (``st.cache_resource`` would record the progress bar's updates and refuse to
    replay them into a block made outside the cached call)."""

    def __init__(self, size: int):
        self.size, self._store, self._lock = size, OrderedDict(), threading.Lock()

    def get(self, key, compute):
        """The result kept under ``key``, else ``compute()`` (kept; an exception keeps nothing)."""
        with self._lock:
            if key in self._store:
                self._store.move_to_end(key)
                return self._store[key]
        out = compute()
        with self._lock:
            self._store[key] = out
            while len(self._store) > self.size:
                self._store.popitem(last=False)
        return out

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._store


def _quick_key(value):
    """:func:`content_key` of ``value``; a hashable plain value (a string, a number, a tuple of them) as
    itself."""
    if isinstance(value, (str, int, float, bool, type(None))) or (
        isinstance(value, tuple) and not any(isinstance(v, (np.ndarray, list, dict)) for v in value[:8])
    ):
        try:
            hash(value)
            return ("h", type(value).__name__, value)
        except TypeError:
            pass
    return content_key(value)


def frozen(value):
    """``value`` with its arrays (and a dict's or tuple's arrays) made read-only: a result every session
    shares."""
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, dict):
        for v in value.values():
            frozen(v)
    elif isinstance(value, tuple):
        for v in value:
            frozen(v)
    return value


def front(cached=None, *, size: int | None = None):
    """A front for a function cached with ``st.cache_data`` / ``st.cache_resource``: a call whose arguments
    equal an earlier call's gets that call's result straight away, for every session of the server.

    The key is the one Streamlit's cache uses -- every argument but those whose name starts with an underscore
    (their content is stood for by another argument: a fingerprint, a model key) -- and is made without
    hashing the function's signature and arguments through Streamlit on every call (a tenth of a class's
    server time, since the pages ask for the same tables, models and Gram matrices several times a run).
    ``st.cache_data`` gives every call a copy; the front gives every session the same result, its arrays made
    read-only (:func:`frozen`), so a page that would change one fails loudly instead of changing another
    session's view. At most ``size`` results are kept (least recently used dropped first), by default as many
    as the cache behind it keeps (its ``max_entries``, else 32), so the front never holds more than the cache
    it stands for."""
    if cached is None:
        return lambda f: front(f, size=size)
    if size is None:
        size = getattr(getattr(cached, "_info", None), "max_entries", None) or 32
    sig = inspect.signature(cached)
    names = list(sig.parameters)
    keyed = [not n.startswith("_") for n in names]
    store: OrderedDict = OrderedDict()
    lock = threading.Lock()

    @functools.wraps(cached)
    def call(*args, **kwargs):
        if kwargs:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            values = list(bound.arguments.values())
        else:
            values = list(args) + [p.default for p in list(sig.parameters.values())[len(args) :]]
        key = tuple(_quick_key(v) for v, k in zip(values, keyed) if k)
        with lock:
            if key in store:
                store.move_to_end(key)
                return store[key]
        hook = _ON_MISS.get()
        if hook is not None:
            hook()
        out = frozen(cached(*args, **kwargs))
        with lock:
            store[key] = out
            while len(store) > size:
                store.popitem(last=False)
        return out

    call.clear = lambda: store.clear()
    return call
