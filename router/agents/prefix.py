"""The 4-layer system prompt whose first two layers are byte-identical for every role.

Layer 1: the static base invariant and the three meta-tools' definitions as RFC 8785 bytes.
Layer 2: roles/00-shared-context.md. Both together are the frozen prefix: nothing in them
may depend on the role, the profile, the brief, the clock or the catalog, so switching roles
keeps the provider's KV cache. Layer 3: the role's own file, its authorized mutation scope
and its toolbox profile. Layer 4: the task brief.

Each layer is its text stripped, followed by one blank line, and the next layer starts with
a non-blank character. So every breakpoint is at the start of a line, and no tokenizer piece
of cl100k-style BPE can span it (a piece never holds a newline followed by a non-space): the
prefix's tokens are the same whichever role's text follows.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from pathlib import Path
from typing import Any

from router.agents.handoff import PROFILE_PATTERN, TaskBrief
from router.agents.permissions import ALLOW, edit_action
from router.agents.roles import Role, get_role
from router.errors import RouterError
from router.facade.definitions import meta_tool_definitions
from router.hashing import b3_hex, canonical_bytes
from router.paths import ROLES_DIR

SHARED_CONTEXT_FILE = "00-shared-context.md"
DEFAULT_PROFILE = "core"
NO_SCOPE = "NONE"
LAYER_SEPARATOR = "\n\n"

BASE_INVARIANT = """\
# Operating invariants

You are an autonomous software engineering agent working in a POSIX (Linux) workspace under
version control with git. These rules hold for every role and every task:

- Evidence over assertion. State only what you observed: a command you ran and its output,
  a file you read, a tool result. When you have not checked something, say so.
- Real implementations only. No stubs, no mocks of your own components, no placeholder
  behaviour, no hard-coded results, no tests that cannot fail.
- Stay inside your authorized mutation scope. Reading is always allowed; changing anything
  outside the scope is refused, and the refusal means the work belongs to another role.
- Hand work on only in the typed JSON envelopes the shared context describes.
- Secrets (keys, tokens, passwords) never appear in envelopes, commits or logs.

# Tool protocol

Your tool list is fixed: the three meta-tools below, identical for every role, every
profile and every turn. Backend tools are found and used through them, in this order:
search, then inspect, then call. Their definitions, as canonical JSON (RFC 8785, sorted by
name):
"""


class PromptError(RouterError):
    """A prompt cannot be assembled from these inputs; the message says which and why."""


@dataclass(frozen=True)
class AssembledPrompt:
    role: str
    profile: str
    layers: tuple[str, str, str, str]

    @property
    def system_prompt(self) -> str:
        return "".join(self.layers)

    @property
    def cache_breakpoints(self) -> tuple[int, int]:
        """UTF-8 byte offsets of the ends of layer 1 and layer 2."""
        end1 = len(self.layers[0].encode("utf-8"))
        return end1, end1 + len(self.layers[1].encode("utf-8"))

    @property
    def frozen_prefix_bytes(self) -> int:
        return self.cache_breakpoints[1]

    def frozen_prefix(self) -> bytes:
        return self.system_prompt.encode("utf-8")[: self.frozen_prefix_bytes]

    def as_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "profile": self.profile,
            "systemPrompt": self.system_prompt,
            "frozenPrefixBytes": self.frozen_prefix_bytes,
            "cacheBreakpoints": list(self.cache_breakpoints),
            "frozenPrefixHash": b3_hex(self.frozen_prefix()),
        }


@lru_cache(maxsize=1)
def canonical_tools_bytes() -> bytes:
    """The meta-tools' definitions, sorted by name, as RFC 8785 bytes (what layer 1 holds)."""
    tools = sorted(meta_tool_definitions(), key=lambda tool: tool["name"])
    return canonical_bytes(tools)


def canonical_tools() -> list[dict[str, Any]]:
    """The definitions decoded from the canonical bytes, keys in canonical order."""
    return json.loads(canonical_tools_bytes())


def _layer(text: str) -> str:
    stripped = text.strip()
    if not stripped:
        raise PromptError("a prompt layer is empty")
    return stripped + LAYER_SEPARATOR


def layer1_text() -> str:
    tools = canonical_tools_bytes().decode("utf-8")
    return _layer(f"{BASE_INVARIANT}\n```json\n{tools}\n```")


def _read_role_file(roles_dir: Path, name: str) -> str:
    path = roles_dir / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PromptError(f"{path}: role prompt file not found") from None


def layer2_text(roles_dir: Path = ROLES_DIR) -> str:
    return _layer(_read_role_file(roles_dir, SHARED_CONTEXT_FILE))


def mutation_scope(role: Role, brief: TaskBrief | None) -> str:
    """The brief's owned paths, each checked against the role's edit rules; else NONE."""
    if brief is None or not brief.ownedPaths:
        return NO_SCOPE
    for index, path in enumerate(brief.ownedPaths):
        if edit_action(role, path) != ALLOW:
            allowed = ", ".join(role.edit_scope) or "nothing"
            raise PromptError(
                f"brief field ownedPaths[{index}]: {path!r} is outside what role "
                f"{role.name!r} may edit ({allowed})"
            )
    return ", ".join(brief.ownedPaths)


def layer3_text(role: Role, profile: str, brief: TaskBrief | None, roles_dir: Path) -> str:
    role_text = _read_role_file(roles_dir, f"{role.name}.md").strip()
    return _layer(
        f"{role_text}\n\n"
        f"## Authorized mutation scope\n{mutation_scope(role, brief)}\n\n"
        f"## Active toolbox profile\n{profile}"
    )


def layer4_text(brief: TaskBrief | None) -> str:
    if brief is None:
        return _layer(
            "# Task brief\nNo task brief has been given yet. Wait for a TaskBrief envelope "
            "addressed to your role; do not change anything before it arrives."
        )
    lines = [
        "# Task brief",
        f"Task: {brief.taskId}",
        f"Goal: {brief.goal}",
        "Owned paths: " + (", ".join(brief.ownedPaths) or NO_SCOPE),
        "Depends on: " + (", ".join(brief.dependsOn) or "nothing"),
        "Acceptance checks (each must exit 0):",
        *(f"- `{check}`" for check in brief.acceptanceChecks),
    ]
    if brief.context.strip():
        lines += ["", "Context:", brief.context.strip()]
    return _layer("\n".join(lines))


_PROFILE_RE = re.compile(PROFILE_PATTERN)


def assemble(
    role_name: str,
    *,
    brief: TaskBrief | None = None,
    profile: str | None = None,
    roles_dir: Path = ROLES_DIR,
) -> AssembledPrompt:
    """Build the role's system prompt; the brief's role and profile must agree with it."""
    role = get_role(role_name)
    if brief is not None and brief.role != role.name:
        raise PromptError(f"brief field role: the brief is for {brief.role!r}, not {role.name!r}")
    if profile is None:
        profile = brief.profile if brief is not None else DEFAULT_PROFILE
    elif brief is not None and brief.profile != profile:
        raise PromptError(f"--profile {profile!r} disagrees with the brief's field profile {brief.profile!r}")
    if not _PROFILE_RE.fullmatch(profile):
        raise PromptError(f"profile {profile!r} is not a profile name ({PROFILE_PATTERN})")
    return AssembledPrompt(
        role=role.name,
        profile=profile,
        layers=(
            layer1_text(),
            layer2_text(roles_dir),
            layer3_text(role, profile, brief, roles_dir),
            layer4_text(brief),
        ),
    )


# What must never be in the frozen prefix: it would differ between sessions or turns.
VOLATILE_PATTERNS = {
    "a timestamp": re.compile(rb"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"),
    "a date": re.compile(rb"\b\d{4}-\d{2}-\d{2}\b"),
    "a UUID": re.compile(rb"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    "a long hex id": re.compile(rb"\b[0-9a-fA-F]{32,}\b"),
}


def prefix_problems(prompts: Sequence[AssembledPrompt]) -> list[str]:
    """Everything that would make the frozen prefix miss the cache; empty when it is sound.

    Checks every pair of prompts byte for byte up to frozenPrefixBytes, that each
    breakpoint is at the start of a line, and that the prefix holds no timestamp or id.
    """
    problems = []
    for a, b in combinations(prompts, 2):
        pa, pb = a.frozen_prefix(), b.frozen_prefix()
        if pa != pb:
            at = next((i for i, (x, y) in enumerate(zip(pa, pb)) if x != y), min(len(pa), len(pb)))
            problems.append(
                f"{a.role} vs {b.role}: frozen prefixes differ at byte {at} ({len(pa)} vs {len(pb)} bytes)"
            )
    for prompt in prompts:
        data = prompt.system_prompt.encode("utf-8")
        for offset in prompt.cache_breakpoints:
            if offset == 0 or data[offset - 1 : offset] != b"\n" or data[offset : offset + 1].isspace():
                problems.append(f"{prompt.role}: breakpoint {offset} is not at the start of a line")
        for what, pattern in VOLATILE_PATTERNS.items():
            found = pattern.search(prompt.frozen_prefix())
            if found:
                problems.append(
                    f"{prompt.role}: frozen prefix holds {what} at byte {found.start()}: "
                    f"{found.group().decode('utf-8', 'replace')!r}"
                )
    return problems
