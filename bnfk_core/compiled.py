"""Compiled functions that numba's on-disk cache keeps apart.

numba files a cached function under its module, its qualified name and its first line, and the key of a
cached compilation holds the signature and the bytecode but not the compile options.  Two dispatchers of one
Python function -- ``numba.njit(parallel=True, cache=True)(f)`` and ``numba.njit(cache=True)(f.py_func)`` --
therefore share one cache entry: whichever compiles first is what the other loads, so a one-thread twin of a
parallel loop would silently run the parallel code (a known limitation of numba's cache).
:func:`one_thread_twin` gives the twin a name of its own, hence its own cache files.

Where the cache lives is numba's choice, not this package's: ``NUMBA_CACHE_DIR`` when the user set it, else
``__pycache__`` beside the source file when that is writable, else numba's user-wide cache directory
(``~/.cache/numba`` on Linux) -- so an installed wheel whose site-packages is read-only still caches.
"""

from __future__ import annotations

import types

import numba

__all__ = ["one_thread_twin"]


def one_thread_twin(parallel, name: str, **options):
    """The one-thread compilation of the parallel dispatcher ``parallel``, cached under ``name``.

    ``prange`` is a plain ``range`` in this compilation, so it computes exactly what ``parallel`` computes
    (row by row in one thread).

    Parameters
    ----------
    parallel : numba dispatcher
        Compiled with ``parallel=True, cache=True``.
    name : str
        The twin's name in its module (its cache files are named after it); the name it is assigned to.
    **options
        Further ``numba.njit`` options (``nogil=True``, ...).

    Returns
    -------
    numba dispatcher
    """
    f = parallel.py_func
    twin = types.FunctionType(f.__code__, f.__globals__, name, f.__defaults__, f.__closure__)
    twin.__qualname__ = name
    twin.__module__ = f.__module__
    twin.__doc__ = f"{f.__name__} in one thread (``prange`` is a plain ``range`` in this compilation)."
    return numba.njit(cache=True, **options)(twin)
