"""Typed handoff envelopes between roles: TaskBrief, WorkerReceipt, QaVerdict.

Each envelope is one JSON object carrying its own `kind`, so a file can be validated
without being told what it holds. The JSON Schemas exported from these models are the
contract for agents written in other languages.
"""

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from router.agents.roles import ROLE_NAMES
from router.errors import RouterError
from router.validation import field_error

TASK_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
# A full git object name as `git rev-parse HEAD` prints it: abbreviations and uppercase are
# refused so that a receipt and a verdict name a commit the same way.
COMMIT_HASH_PATTERN = r"^[0-9a-f]{40}$"
# Workspace-relative path or glob with forward slashes: not absolute, no backslashes
# (the '..' check is in _no_parent_segments: JSON Schema regexes lack look-ahead).
RELATIVE_PATH_PATTERN = r"^[^/\\\x00][^\\\x00]{0,511}$"
PROFILE_PATTERN = r"^[a-z0-9][a-z0-9_\-]{0,31}$"

RoleName = Literal[ROLE_NAMES]  # type: ignore[valid-type]


def _no_parent_segments(path: str) -> str:
    if ".." in path.split("/"):
        raise ValueError(f"path {path!r} leaves the workspace ('..' segment)")
    return path


RelativePath = Annotated[str, Field(pattern=RELATIVE_PATH_PATTERN), AfterValidator(_no_parent_segments)]
TaskId = Annotated[str, Field(pattern=TASK_ID_PATTERN)]
NonEmptyText = Annotated[str, Field(min_length=1)]


class HandoffError(RouterError):
    """An envelope file is unreadable or invalid; the message names the file and field."""


class _Envelope(BaseModel):
    # strict: "1" is not an exit code and "yes" is not a boolean, as in the exported schemas
    model_config = ConfigDict(extra="forbid", strict=True)


class TaskBrief(_Envelope):
    """Work for one role: what to achieve, which paths it owns, how done is checked."""

    kind: Literal["TaskBrief"]
    taskId: TaskId
    role: RoleName
    goal: NonEmptyText
    ownedPaths: list[RelativePath] = Field(default_factory=list)
    acceptanceChecks: list[NonEmptyText] = Field(min_length=1)
    dependsOn: list[TaskId] = Field(default_factory=list)
    profile: str = Field(default="core", pattern=PROFILE_PATTERN)
    context: str = ""

    @model_validator(mode="after")
    def _not_its_own_dependency(self) -> "TaskBrief":
        if self.taskId in self.dependsOn:
            raise ValueError(f"dependsOn lists the task itself ({self.taskId!r})")
        return self


class UnitTestSummary(_Envelope):
    command: NonEmptyText
    passed: int = Field(ge=0)
    failed: int = Field(ge=0)
    skipped: int = Field(default=0, ge=0)


class WorkerReceipt(_Envelope):
    """What a worker delivered: the commit, the files, and the checks it really ran."""

    kind: Literal["WorkerReceipt"]
    taskId: TaskId
    role: RoleName
    commitHash: str = Field(pattern=COMMIT_HASH_PATTERN)
    modifiedFiles: list[RelativePath] = Field(min_length=1)
    unitTestSummary: UnitTestSummary
    compilerCheckPassed: bool
    notes: str = ""


class RedProofEvidence(_Envelope):
    """The tests were shown to fail while the code was sabotaged, and the sabotage undone."""

    sabotagedFile: RelativePath
    sabotageDescription: NonEmptyText
    testCommand: NonEmptyText
    # A run that still exits 0 while the code is broken proves the tests are vacuous.
    exitCodeDuringSabotage: int = Field(ge=1)
    revertedCleanly: Literal[True]


class QaVerdict(_Envelope):
    """The adversary's judgement of one commit."""

    kind: Literal["QaVerdict"]
    taskId: TaskId
    commitHash: str = Field(pattern=COMMIT_HASH_PATTERN)
    verdict: Literal["PASS", "FAIL"]
    redProofEvidence: RedProofEvidence
    findings: list[NonEmptyText] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fail_says_why(self) -> "QaVerdict":
        if self.verdict == "FAIL" and not self.findings:
            raise ValueError("a FAIL verdict must list at least one finding")
        return self


ENVELOPE_MODELS: tuple[type[_Envelope], ...] = (TaskBrief, WorkerReceipt, QaVerdict)
ENVELOPE_KINDS = tuple(model.__name__ for model in ENVELOPE_MODELS)

Envelope = Annotated[TaskBrief | WorkerReceipt | QaVerdict, Field(discriminator="kind")]
_ENVELOPE_ADAPTER = TypeAdapter(Envelope)

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def json_schemas() -> dict[str, dict[str, Any]]:
    """Each envelope's JSON Schema (2020-12), keyed by kind."""
    schemas = {}
    for model in ENVELOPE_MODELS:
        schema = model.model_json_schema()
        schemas[model.__name__] = {"$schema": JSON_SCHEMA_DIALECT, **schema}
    return schemas


def write_json_schemas(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for kind, schema in json_schemas().items():
        path = out_dir / f"{kind}.schema.json"
        path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


def parse_envelope(raw: Any, *, source: str = "envelope") -> TaskBrief | WorkerReceipt | QaVerdict:
    """Validate a decoded JSON value as one of the envelopes, or raise naming the field."""
    if not isinstance(raw, dict):
        raise HandoffError(f"{source}: expected a JSON object, got {type(raw).__name__}")
    kind = raw.get("kind")
    if kind not in ENVELOPE_KINDS:
        raise HandoffError(f"{source}: field kind: must be one of {', '.join(ENVELOPE_KINDS)}, got {kind!r}")
    try:
        return _ENVELOPE_ADAPTER.validate_python(raw)
    except ValidationError as exc:
        raise HandoffError(f"{source}: {kind}: {describe_errors(exc)}") from None


def describe_errors(exc: ValidationError) -> str:
    """'field redProofEvidence.exitCodeDuringSabotage: Input should be ...; field ...'."""
    parts = []
    for error in exc.errors():
        # the discriminated union puts the kind first in the location: drop it
        loc = list(error["loc"])
        if loc and loc[0] in ENVELOPE_KINDS:
            loc = loc[1:]
        parts.append(field_error(error, loc, whole="(whole envelope)"))
    return "; ".join(parts)


def read_json_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HandoffError(f"{path}: file not found") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise HandoffError(f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from None


def read_envelope(path: Path) -> TaskBrief | WorkerReceipt | QaVerdict:
    return parse_envelope(read_json_file(path), source=str(path))


def read_task_brief(path: Path) -> TaskBrief:
    envelope = read_envelope(path)
    if not isinstance(envelope, TaskBrief):
        raise HandoffError(f"{path}: field kind: expected a TaskBrief, got {envelope.kind}")
    return envelope
