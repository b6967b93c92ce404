"""``python -m fastpool``: the self-check (see fastpool._selfcheck)."""

import sys

from fastpool._selfcheck import main

if __name__ == "__main__":
    sys.exit(main())
