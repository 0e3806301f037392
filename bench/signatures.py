"""Whether a page's call signatures are enough to call the tools they name.

For every seeded tool, loaded into a real catalog (so the schema is the one the catalog
stores and mcp_call_tool checks), its signature as a page shows it
(router/catalog/signatures.py, full and short form) is read back by a parser of the
signature's grammar, and a call is filled from it alone: one value of the named type per
required argument (str "x", int 1, num 1.5, bool true, an array of one such value, an object
with its required members, an enum's first value). The call is then checked against the
tool's inputSchema with the validator mcp_call_tool uses. A tool passes when the call is
valid; it is excused when every error is a value constraint the signature does not promise
to carry (a pattern, a range, a length, a format, an enum too long to list); every other
failure is the signature's fault and is listed with why.

Run alone: `python -m bench.signatures`.
"""

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema.exceptions import ValidationError

from bench.report import Options, Section, markdown_table
from router.catalog import schema_drafts
from router.catalog.load import load_catalog
from router.catalog.signatures import ANY, OMITTED, tool_signatures
from router.db import connect
from router.paths import SEEDS_DIR

# The bar: the share of seeded tools whose signature alone makes a valid call.
BAR = 0.90

# Keywords that constrain a value beyond its type: a signature says the type, not these.
VALUE_CONSTRAINTS = frozenset(
    {
        "enum",
        "const",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "not",
    }
)
CHOICES = frozenset({"anyOf", "oneOf"})

# A value of each type a signature names.
SAMPLE_VALUES: dict[str, Any] = {
    "str": "x",
    "int": 1,
    "num": 1.5,
    "bool": True,
    "null": None,
    "obj": {},
    ANY: "x",
}

SCHEMAS_SQL = "SELECT name, input_schema, arg_validator FROM tools ORDER BY name"


class SignatureSyntaxError(ValueError):
    """A signature the grammar does not read."""


class _Reader:
    """A recursive-descent reader of one signature: NAME(arg, ...)."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def call(self) -> dict[str, Any]:
        opening = self.text.find("(")
        if opening <= 0 or not self.text.endswith(")"):
            raise SignatureSyntaxError(f"not NAME(...): {self.text!r}")
        self.at = opening + 1
        values = self._members(")")
        if self.at != len(self.text):
            raise SignatureSyntaxError(f"text after the closing parenthesis at {self.at}: {self.text!r}")
        return values

    def _members(self, closing: str) -> dict[str, Any]:
        """`key: type, key?: type, …` up to `closing`: the required members' values."""
        values: dict[str, Any] = {}
        while not self._take(closing):
            if values or self.text[self.at - 1] not in "({":
                self._expect(", ")
            if self._take(OMITTED):
                continue
            key = self._key()
            optional = self._take("?")
            self._expect(": ")
            value = self._type()
            if not optional:
                values[key] = value
        return values

    def _key(self) -> str:
        if self._peek('"'):
            return str(self._json_string())
        start = self.at
        while self.at < len(self.text) and (self.text[self.at].isalnum() or self.text[self.at] in "_$.-"):
            self.at += 1
        if self.at == start:
            raise SignatureSyntaxError(f"expected an argument name at {start}: {self.text!r}")
        return self.text[start : self.at]

    def _type(self) -> Any:
        """A choice of alternatives: the value of the first."""
        first = self._alternative()
        while self._take("|"):
            if not self._take(OMITTED):  # an enum's values not shown
                self._alternative()
        return first

    def _alternative(self) -> Any:
        if self._take("["):
            item = self._type()
            self._expect("]")
            return [item]
        if self._take("{"):
            return self._members("}")
        if self._peek('"'):
            return self._json_string()
        for name, value in SAMPLE_VALUES.items():
            if self._take(name):
                return value
        return self._json_scalar()

    def _json_string(self) -> Any:
        decoded, end = json.JSONDecoder().raw_decode(self.text, self.at)
        self.at = end
        return decoded

    def _json_scalar(self) -> Any:
        try:
            return self._json_string()
        except ValueError:
            raise SignatureSyntaxError(f"expected a type at {self.at}: {self.text!r}") from None

    def _peek(self, token: str) -> bool:
        return self.text.startswith(token, self.at)

    def _take(self, token: str) -> bool:
        if self._peek(token):
            self.at += len(token)
            return True
        return False

    def _expect(self, token: str) -> None:
        if not self._take(token):
            raise SignatureSyntaxError(f"expected {token!r} at {self.at}: {self.text!r}")


def filled_call(signature: str) -> dict[str, Any]:
    """The args a caller who sees only `signature` would send: a value of the named type for
    each required argument."""
    return _Reader(signature).call()


@dataclass(frozen=True)
class Verdict:
    outcome: str  # "pass", "excused" (value constraints only), "fail"
    why: str = ""


def _only_value_constraints(error: ValidationError) -> bool:
    if error.validator in VALUE_CONSTRAINTS:
        return True
    if error.validator in CHOICES and error.context:
        # the choice failed; excused when some alternative failed on value constraints alone
        by_branch: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            by_branch.setdefault(sub.relative_schema_path[0], []).append(sub)
        return any(all(_only_value_constraints(sub) for sub in subs) for subs in by_branch.values())
    return False


def judge(signature: str, schema: dict[str, Any], draft: str) -> Verdict:
    """Whether a call filled from `signature` alone passes `schema` (under `draft`)."""
    try:
        call = filled_call(signature)
    except SignatureSyntaxError as exc:
        return Verdict("fail", f"unreadable signature: {exc}")
    validator = schema_drafts.validator(draft, schema)
    if validator is None:
        return Verdict("excused", "no JSON Schema draft accepts its schema (the backend checks)")
    errors = list(validator.iter_errors(call))
    if not errors:
        return Verdict("pass")
    listed = "; ".join(f"{'/'.join(map(str, e.path)) or '(top)'}: {e.message}" for e in errors[:3])
    if all(_only_value_constraints(error) for error in errors):
        return Verdict("excused", f"value constraints: {listed}")
    return Verdict("fail", f"{json.dumps(call)} → {listed}")


def measure(db: Path) -> dict[str, Any]:
    conn = connect(db)
    try:
        load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
        rows = conn.execute(SCHEMAS_SQL).fetchall()
        signatures = tool_signatures(conn, [str(name) for name, _, _ in rows])
    finally:
        conn.close()
    results: dict[str, Any] = {}
    for form in ("full", "short"):
        verdicts = {
            str(name): judge(getattr(signatures[str(name)], form), json.loads(schema), str(draft))
            for name, schema, draft in rows
        }
        counts = {o: sum(v.outcome == o for v in verdicts.values()) for o in ("pass", "excused", "fail")}
        results[form] = {
            "tools": len(verdicts),
            **counts,
            "pass_share": counts["pass"] / len(verdicts) if verdicts else 0.0,
            "failed_tools": {name: v.why for name, v in verdicts.items() if v.outcome == "fail"},
            "excused_tools": {name: v.why for name, v in verdicts.items() if v.outcome == "excused"},
        }
    # what the signature is tested on: tools an empty call would not satisfy
    results["need_arguments"] = sum(
        bool(list(schema_drafts.validator(str(draft), json.loads(schema)).iter_errors({})))
        for _, schema, draft in rows
        if schema_drafts.validator(str(draft), json.loads(schema)) is not None
    )
    results["examples"] = {
        name: signatures[name].full
        for name in ("git_log", "edit_file", "create_entities")
        if name in signatures
    }
    return results


def run(options: Options) -> Section:
    with tempfile.TemporaryDirectory() as scratch:
        figures = measure(Path(scratch) / "signatures.db")
    rows = [
        [form, f["tools"], f["pass"], f["excused"], f["fail"], f"{f['pass_share']:.1%}"]
        for form, f in ((form, figures[form]) for form in ("full", "short"))
    ]
    full = figures["full"]
    verdict = "PASS" if full["pass_share"] >= BAR and figures["short"]["pass_share"] >= BAR else "FAIL"
    lines = [
        "A call filled from each seeded tool's signature alone (a value of the named type per "
        "required argument), checked against its inputSchema as mcp_call_tool checks it.",
        "",
        markdown_table(["form", "tools", "valid call", "excused", "failed", "valid share"], rows),
        "",
        f"- share of seeded tools callable from the signature alone (bar ≥ {BAR:.0%}, both forms): "
        f"full {full['pass_share']:.1%}, short {figures['short']['pass_share']:.1%} {verdict}",
        f"- {figures['need_arguments']} of the {full['tools']} tools refuse an empty call: the "
        "signature is what makes theirs valid",
    ]
    for form in ("full", "short"):
        for name, why in figures[form]["failed_tools"].items():
            lines.append(f"- failed ({form}) `{name}`: {why}")
        for name, why in figures[form]["excused_tools"].items():
            lines.append(f"- excused ({form}) `{name}`: {why}")
    lines += ["", "Examples: " + "; ".join(f"`{s}`" for s in figures["examples"].values())]
    return Section("Call signatures", "\n".join(lines), figures)


if __name__ == "__main__":
    print(run(Options(sizes=(), write=False)).markdown)
