"""Work shared by every session of the server: a figure (or any pure result) built once per distinct input.

A class of thirty opens the same pages on the same data and structure; each rerun used to build the same plotly
figures again (a quarter of a class's server time).  :func:`shared` keys a pure builder's result on its inputs'
content -- arrays by a hash of their bytes, other values as they are -- so that a rerun that changed nothing, and
every other session with the same inputs, gets the figure already built.  The figures are never changed after
they are built (``st.plotly_chart`` copies what it sends).
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

__all__ = ["shared", "content_key", "MAX_SHARED"]

#: results kept (least recently used dropped first); a 500-row heatmap figure is a few MB
MAX_SHARED = 48
_STORE: OrderedDict = OrderedDict()
_LOCK = threading.Lock()


def content_key(value):
    """A hashable key standing for ``value``'s content (arrays by shape, dtype and a hash of their bytes)."""
    if isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        if a.dtype == object:
            return ("nd-object", a.shape, tuple(content_key(x) for x in a.ravel().tolist()))
        return ("nd", a.shape, a.dtype.str, hashlib.blake2b(a.view(np.uint8), digest_size=16).hexdigest())
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
    out = fn(*args, **kwargs)
    with _LOCK:
        _STORE[key] = out
        while len(_STORE) > MAX_SHARED:
            _STORE.popitem(last=False)
    return out
