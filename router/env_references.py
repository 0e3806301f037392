"""`${env:NAME}`: a value a servers file leaves in the environment instead of writing it down.

`context-router import` writes a secret it finds in a client's config as such a reference;
the backend pool expands it when the server starts (router/facade/placeholders.py),
and a server whose references are not all set is reported unavailable, not started.
"""

import re
from collections.abc import Iterable, Mapping

# the capture group is the variable's name: re.split puts it at the odd indexes
ENV_REFERENCE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


def reference(name: str) -> str:
    return f"${{env:{name}}}"


def variable_name(text: str) -> str:
    """An environment variable name made of any text: 'github token' → GITHUB_TOKEN."""
    return re.sub(r"[^A-Za-z0-9_]", "_", text).upper()


def referenced_names(texts: Iterable[str]) -> list[str]:
    """The variables named by ${env:NAME} in any of the texts, in order, without repeats."""
    names: list[str] = []
    for text in texts:
        for name in ENV_REFERENCE.findall(text):
            if name not in names:
                names.append(name)
    return names


def unset_names(texts: Iterable[str], environ: Mapping[str, str]) -> list[str]:
    return [name for name in referenced_names(texts) if name not in environ]
