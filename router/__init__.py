"""context-router: three cache-stable MCP meta-tools over one SQLite catalog."""

__version__ = "0.1.0"

import os

# numpy's OpenBLAS runs a matrix product on a thread per core. A search multiplies a few
# hundred 256-d vectors, where threads only cost: on the 2-core bench machine, busy, one
# 10,000-row product took 8 ms with them and 0.28 ms on one thread. OpenBLAS reads this when
# numpy is first imported, which is always after this package's own import; a value the user
# set wins. Backends do not inherit it (they get the MCP SDK's default environment).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
