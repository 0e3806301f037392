"""Optional features and the extra that installs each.

The core install is what serving needs. A feature that alone needs a heavy library (ICU for
the skills CLI's sort order, CEL for gateway rules, a tokenizer for break-glass estimates)
imports it through `require`, so a missing library is a message naming the extra to install,
never an ImportError traceback.
"""

import importlib
from types import ModuleType

from router.errors import RouterError


class MissingExtraError(RouterError):
    """A feature's optional dependency is not installed."""


def require(module: str, *, extra: str, feature: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{feature} needs the {extra!r} extra, which is not installed: "
            f"pip install 'context-router[{extra}]' (in a checkout, make install installs every extra)"
        ) from None
