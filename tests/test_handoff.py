"""Handoff envelopes: what they accept, what they refuse (naming the field), and the
exported JSON Schemas agreeing with the pydantic models."""

import copy
import json

import pytest
from jsonschema import Draft202012Validator

from router.agents.handoff import (
    ENVELOPE_KINDS,
    HandoffError,
    QaVerdict,
    TaskBrief,
    WorkerReceipt,
    parse_envelope,
)
from router.cli import main

COMMIT = "3f2b8c1e9a4d4e2b8f1a0c9d7e6b5a4100112233"

VALID = {
    "TaskBrief": {
        "kind": "TaskBrief",
        "taskId": "ratelimit-2",
        "role": "staff-backend",
        "goal": "Implement the token bucket.",
        "ownedPaths": ["src/ratelimit/**"],
        "acceptanceChecks": ["pytest -q tests/test_ratelimit.py"],
        "dependsOn": ["ratelimit-1"],
    },
    "WorkerReceipt": {
        "kind": "WorkerReceipt",
        "taskId": "ratelimit-2",
        "role": "staff-backend",
        "commitHash": COMMIT,
        "modifiedFiles": ["src/ratelimit/bucket.py", "tests/test_ratelimit.py"],
        "unitTestSummary": {"command": "pytest -q", "passed": 12, "failed": 0, "skipped": 1},
        "compilerCheckPassed": True,
    },
    "QaVerdict": {
        "kind": "QaVerdict",
        "taskId": "ratelimit-2",
        "commitHash": COMMIT,
        "verdict": "PASS",
        "redProofEvidence": {
            "sabotagedFile": "src/ratelimit/bucket.py",
            "sabotageDescription": "refill() returns without adding tokens",
            "testCommand": "pytest -q tests/test_ratelimit.py",
            "exitCodeDuringSabotage": 1,
            "revertedCleanly": True,
        },
    },
}


def variant(kind, path, value):
    """VALID[kind] with the field at dotted `path` set to value (or removed if value is ...)."""
    data = copy.deepcopy(VALID[kind])
    *parents, last = path.split(".")
    target = data
    for part in parents:
        target = target[part]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return data


# (kind, field path, bad value, field named in the error, JSON Schema can express it)
REJECTED = [
    ("WorkerReceipt", "commitHash", COMMIT[:39], "commitHash", True),
    ("WorkerReceipt", "commitHash", COMMIT + "0", "commitHash", True),
    ("WorkerReceipt", "commitHash", COMMIT.upper(), "commitHash", True),
    ("WorkerReceipt", "commitHash", COMMIT[:39] + "g", "commitHash", True),
    ("WorkerReceipt", "commitHash", COMMIT[:7], "commitHash", True),
    ("WorkerReceipt", "modifiedFiles", [], "modifiedFiles", True),
    ("WorkerReceipt", "modifiedFiles", ["src/a.py", "../etc/passwd"], "modifiedFiles[1]", False),
    ("WorkerReceipt", "modifiedFiles", ["/abs/path.py"], "modifiedFiles[0]", True),
    ("WorkerReceipt", "unitTestSummary.failed", -1, "unitTestSummary.failed", True),
    ("WorkerReceipt", "unitTestSummary.passed", "12", "unitTestSummary.passed", True),
    ("WorkerReceipt", "compilerCheckPassed", "yes", "compilerCheckPassed", True),
    ("WorkerReceipt", "compilerCheckPassed", ..., "compilerCheckPassed", True),
    ("WorkerReceipt", "role", "intern", "role", True),
    ("WorkerReceipt", "comitHash", COMMIT, "comitHash", True),
    (
        "QaVerdict",
        "redProofEvidence.exitCodeDuringSabotage",
        0,
        "redProofEvidence.exitCodeDuringSabotage",
        True,
    ),
    (
        "QaVerdict",
        "redProofEvidence.exitCodeDuringSabotage",
        -1,
        "redProofEvidence.exitCodeDuringSabotage",
        True,
    ),
    ("QaVerdict", "redProofEvidence.revertedCleanly", False, "redProofEvidence.revertedCleanly", True),
    ("QaVerdict", "redProofEvidence.revertedCleanly", ..., "redProofEvidence.revertedCleanly", True),
    ("QaVerdict", "redProofEvidence", ..., "redProofEvidence", True),
    ("QaVerdict", "verdict", "pass", "verdict", True),
    ("QaVerdict", "commitHash", "HEAD", "commitHash", True),
    ("TaskBrief", "acceptanceChecks", [], "acceptanceChecks", True),
    ("TaskBrief", "acceptanceChecks", [""], "acceptanceChecks[0]", True),
    ("TaskBrief", "taskId", "has space", "taskId", True),
    ("TaskBrief", "goal", "", "goal", True),
    ("TaskBrief", "ownedPaths", ["src\\win.py"], "ownedPaths[0]", True),
]


@pytest.mark.parametrize("kind", ENVELOPE_KINDS)
def test_valid_envelopes_are_accepted(kind):
    envelope = parse_envelope(copy.deepcopy(VALID[kind]))
    assert envelope.kind == kind
    assert (
        type(envelope)
        is {"TaskBrief": TaskBrief, "WorkerReceipt": WorkerReceipt, "QaVerdict": QaVerdict}[kind]
    )


def test_fail_verdict_with_findings_is_accepted():
    data = variant("QaVerdict", "verdict", "FAIL")
    data["findings"] = ["src/ratelimit/bucket.py: refill ignores elapsed time"]
    assert parse_envelope(data).verdict == "FAIL"


def test_exit_code_above_one_is_accepted():
    data = variant("QaVerdict", "redProofEvidence.exitCodeDuringSabotage", 2)
    assert parse_envelope(data).redProofEvidence.exitCodeDuringSabotage == 2


@pytest.mark.parametrize("kind, path, value, field, _", REJECTED)
def test_invalid_envelopes_are_refused_naming_the_field(kind, path, value, field, _):
    with pytest.raises(HandoffError) as caught:
        parse_envelope(variant(kind, path, value), source="e.json")
    message = str(caught.value)
    assert message.startswith(f"e.json: {kind}: ")
    assert f"field {field}:" in message, message


def test_model_level_rules_are_refused():
    with pytest.raises(HandoffError, match="FAIL verdict must list at least one finding"):
        parse_envelope(variant("QaVerdict", "verdict", "FAIL"))
    with pytest.raises(HandoffError, match="dependsOn lists the task itself"):
        parse_envelope(variant("TaskBrief", "dependsOn", ["ratelimit-2"]))


def test_unknown_kind_and_non_object_are_refused():
    with pytest.raises(HandoffError, match="field kind: must be one of TaskBrief, WorkerReceipt, QaVerdict"):
        parse_envelope(variant("TaskBrief", "kind", "Memo"))
    with pytest.raises(HandoffError, match="expected a JSON object"):
        parse_envelope([VALID["TaskBrief"]])


# --- the exported JSON Schemas ------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("schemas")
    assert main(["schemas", "--out", str(out)]) == 0
    schemas = {}
    for kind in ENVELOPE_KINDS:
        schema = json.loads((out / f"{kind}.schema.json").read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        schemas[kind] = Draft202012Validator(schema)
    return schemas


@pytest.mark.parametrize("kind", ENVELOPE_KINDS)
def test_exported_schema_accepts_the_valid_envelope(exported, kind):
    assert list(exported[kind].iter_errors(VALID[kind])) == []


@pytest.mark.parametrize("kind, path, value, field, expressible", [r for r in REJECTED if r[4]])
def test_exported_schema_refuses_what_the_model_refuses(exported, kind, path, value, field, expressible):
    assert list(exported[kind].iter_errors(variant(kind, path, value))) != []


# --- `context-router handoff validate` ----------------------------------------------------


def test_cli_validate_accepts(tmp_path, capsys):
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(VALID["WorkerReceipt"]), encoding="utf-8")
    assert main(["handoff", "validate", str(path)]) == 0
    assert "valid WorkerReceipt (task ratelimit-2)" in capsys.readouterr().out


def test_cli_validate_names_the_field_and_exits_2(tmp_path, capsys):
    path = tmp_path / "verdict.json"
    path.write_text(
        json.dumps(variant("QaVerdict", "redProofEvidence.exitCodeDuringSabotage", 0)), encoding="utf-8"
    )
    assert main(["handoff", "validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: QaVerdict: field redProofEvidence.exitCodeDuringSabotage:" in err
    assert "greater than or equal to 1" in err


def test_cli_validate_reports_bad_json_and_missing_file(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text('{"kind": "TaskBrief",\n  "taskId": }', encoding="utf-8")
    assert main(["handoff", "validate", str(path)]) == 2
    assert "line 2 column" in capsys.readouterr().err
    assert main(["handoff", "validate", str(tmp_path / "absent.json")]) == 2
    assert "file not found" in capsys.readouterr().err


# --- a director's plan: TaskBriefs forming a DAG ------------------------------------------


def brief(task_id, role="staff-backend", depends_on=()):
    return {
        **VALID["TaskBrief"],
        "taskId": task_id,
        "role": role,
        "dependsOn": list(depends_on),
    }


def run_validate(tmp_path, capsys, value):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    code = main(["handoff", "validate", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_plan_is_accepted_and_ordered_by_dependencies(tmp_path, capsys):
    plan = [
        brief("qa", "qa-adversary", ["impl"]),
        brief("impl", depends_on=["contract"]),
        brief("contract", "architect"),
    ]
    code, out = run_validate(tmp_path, capsys, plan)
    assert code == 0
    assert "valid plan of 3 TaskBriefs; dependency order: contract, impl, qa" in out


@pytest.mark.parametrize(
    "plan, message",
    [
        ([brief("a"), brief("a")], "[1]: field taskId: 'a' is already used by [0]"),
        ([brief("a", depends_on=["ghost"])], "[0]: field dependsOn[0]: no task 'ghost' in the plan"),
        (
            [brief("a", depends_on=["b"]), brief("b", depends_on=["c"]), brief("c", depends_on=["a"])],
            "field dependsOn: tasks form a cycle",
        ),
        ([brief("a"), VALID["WorkerReceipt"]], "[1]: field kind: a plan holds only TaskBriefs"),
        ([brief("a"), {**brief("b"), "goal": ""}], "[1]: TaskBrief: field goal"),
        ([], "a plan needs at least one TaskBrief"),
    ],
)
def test_plan_errors_name_the_brief_and_field(tmp_path, capsys, plan, message):
    code, out = run_validate(tmp_path, capsys, plan)
    assert code == 2
    assert message in out, out
