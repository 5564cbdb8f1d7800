"""``python -m bnfk_core``: see :mod:`bnfk_core.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
