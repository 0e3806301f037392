"""Which semantic model search uses: the setting CONTEXT_ROUTER_SEMANTIC_MODEL.

- "static" (the default): the static model shipped in the package (microseconds a query);
- "onnx": the transformer of the extra `semantic-onnx` (milliseconds a query, best quality);
- "off": no semantic part, lexical ranking only.

A value outside these, or "onnx" without the extra installed, is an error saying so: a
misspelt setting must not silently change how search ranks.
"""

import os

from router.semantic.onnx_model import OnnxModel, default_onnx_model
from router.semantic.static_model import ModelError, StaticModel, default_model

SETTING = "CONTEXT_ROUTER_SEMANTIC_MODEL"
CHOICES = ("static", "onnx", "off")
DEFAULT_CHOICE = "static"


def configured_model(environ: dict[str, str] | None = None) -> StaticModel | OnnxModel | None:
    """The model the setting names (loaded once per process), or None for "off" and for a
    checkout whose static model has not been built."""
    choice = (os.environ if environ is None else environ).get(SETTING, DEFAULT_CHOICE).strip().lower()
    if choice == "static":
        return default_model()
    if choice == "onnx":
        return default_onnx_model()
    if choice == "off":
        return None
    raise ModelError(f"{SETTING}={choice!r}: expected one of {', '.join(CHOICES)}")
