"""context-router: three cache-stable MCP meta-tools over one SQLite catalog."""

__version__ = "0.1.0"

import os

# numpy's OpenBLAS runs a matrix product on a thread per core; search's products are small,
# where threads only add overhead (docs/research.md has the figures). OpenBLAS reads this at
# numpy's first import, which always follows this one; a value the user set wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
