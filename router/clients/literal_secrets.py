"""A literal secret found in a client's config is moved out of it, never copied.

The user's servers file gets a `${env:NAME}` reference in its place and the user is told
which variable to export (and where the value is now); the value itself is written nowhere,
printed nowhere. `import --keep-secrets` keeps literal values instead (the servers file is
then written readable by its owner only). What counts as a secret: an env entry or header
whose name says so (token, key, secret, password, auth, credential), or any value shaped
like a known credential (what router/redaction/redactor.py would remove).
"""

import re

from router import env_references
from router.clients import ClientServer
from router.env_references import ENV_REFERENCE, reference
from router.redaction.redactor import SECRET_ENV_NAME, Redactor

_PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie"}


def looks_secret(name: str, value: str) -> bool:
    if not value or _PLACEHOLDER.fullmatch(value.strip()):
        return False
    literal = ENV_REFERENCE.sub("", value)
    if not literal.strip():
        return False
    return bool(SECRET_ENV_NAME.search(name)) or name.lower() in SECRET_HEADERS or _token_shaped(literal)


def _token_shaped(text: str) -> bool:
    """Would the router's redactor (token shapes, detect-secrets) remove part of it?"""
    return Redactor(environ={}).text(text) != text


def variable_name(server: str, name: str) -> str:
    return env_references.variable_name(f"{server}_{name}")


def move_out(server: ClientServer, keep: bool) -> list[str]:
    """Replace literal secrets by ${env:NAME}; the messages say what to export (no values)."""
    messages = []
    for key, value in list(server.env.items()):
        if looks_secret(key, value):
            if keep:
                messages.append(f"env {key}: a literal secret, kept as you asked (--keep-secrets)")
                continue
            server.env[key] = reference(key)
            messages.append(
                f"env {key}: its secret value was left out; export {key}=... (the value is in {server.source})"
            )
    for key, value in list(server.headers.items()):
        if looks_secret(key, value):
            if keep:
                messages.append(f"header {key}: a literal secret, kept as you asked (--keep-secrets)")
                continue
            variable = variable_name(server.name, key)
            scheme, _, rest = value.partition(" ")
            kept_scheme = scheme.lower() in ("bearer", "basic", "token") and bool(rest)
            server.headers[key] = f"{scheme} {reference(variable)}" if kept_scheme else reference(variable)
            messages.append(
                f"header {key}: its secret value was left out; export {variable}=... "
                f"(the value{' after ' + repr(scheme) if kept_scheme else ''} is in {server.source})"
            )
    for index, arg in enumerate(server.args):
        if _token_shaped(ENV_REFERENCE.sub("", arg)):
            if keep:
                messages.append(f"args[{index}]: a literal secret, kept as you asked (--keep-secrets)")
                continue
            variable = variable_name(server.name, f"arg{index}")
            server.args[index] = reference(variable)
            messages.append(
                f"args[{index}]: a secret was left out; export {variable}=... (it is in {server.source})"
            )
    return messages
