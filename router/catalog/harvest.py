"""Harvest: a live backend's tools/list → its seed file, keeping what people wrote by hand.

Per tool, the MCP definition (everything but the router fields `triggers` and `boost`) is
compared by content hash with the seed's:
- a new tool is added (with no triggers or boost yet);
- an unchanged tool keeps its seed entry as it is, hand-written fields included;
- a changed or vanished tool is *flagged* and left as it was, unless the caller accepts
  the changes; then the new definition replaces the old one and its triggers and boost stay.
The new seed is validated with the same model `context-router catalog` uses before it is
written, and written whole (temporary file, then rename).
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from router.backends.servers import ServerConfig, ServersConfig
from router.catalog.models import ROUTER_FIELDS, SeedFile
from router.errors import SeedError
from router.facade.placeholders import Placeholders
from router.files import write_atomically
from router.hashing import content_hash
from router.validation import first_field_error


@dataclass
class HarvestReport:
    seed_file: Path
    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # tool name → the top-level fields whose values differ from the seed
    changed: dict[str, list[str]] = field(default_factory=dict)
    vanished: list[str] = field(default_factory=list)
    accepted: bool = False

    @property
    def flagged(self) -> bool:
        return bool(self.changed or self.vanished) and not self.accepted

    def lines(self) -> list[str]:
        out = [
            f"{self.seed_file}: {len(self.added)} added, {len(self.unchanged)} unchanged, "
            f"{len(self.changed)} changed, {len(self.vanished)} gone from the live server"
        ]
        verdict = "replaced (accepted)" if self.accepted else "FLAGGED, seed entry kept"
        for name, fields in sorted(self.changed.items()):
            out.append(f"  changed: {name} ({', '.join(fields)}): {verdict}")
        for name in self.vanished:
            out.append(
                f"  gone: {name}: {'removed (accepted)' if self.accepted else 'FLAGGED, seed entry kept'}"
            )
        if self.flagged:
            out.append(
                "  rerun with --accept-changed to take the live definitions (triggers, boost and "
                "read-only reviews are kept)"
            )
        return out


def _definition(tool: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in tool.items() if k not in ROUTER_FIELDS}


def _differing_fields(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    keys = sorted(set(old) | set(new))
    return [k for k in keys if content_hash(old.get(k)) != content_hash(new.get(k))]


def merge(
    seed: dict[str, Any], live_tools: list[dict[str, Any]], accept_changed: bool, report: HarvestReport
) -> dict[str, Any]:
    """The seed with the live tools merged in (pure: no files, no processes)."""
    old_by_name = {tool["name"]: tool for tool in seed.get("tools", [])}
    merged = []
    for live in live_tools:
        name = live["name"]
        old = old_by_name.get(name)
        if old is None:
            merged.append(live)
            report.added.append(name)
        elif content_hash(_definition(old)) == content_hash(live):
            merged.append(old)
            report.unchanged.append(name)
        else:
            report.changed[name] = _differing_fields(_definition(old), live)
            kept = {k: old[k] for k in ROUTER_FIELDS if k in old}
            merged.append(live | kept if accept_changed else old)
    live_names = {tool["name"] for tool in live_tools}
    for name, old in old_by_name.items():
        if name not in live_names:
            report.vanished.append(name)
            if not accept_changed:
                merged.append(old)
    report.accepted = accept_changed and bool(report.changed or report.vanished)
    return seed | {"tools": merged}


async def harvest(
    server_name: str,
    servers: ServersConfig,
    seeds_dir: Path,
    placeholders: Placeholders,
    *,
    accept_changed: bool = False,
) -> HarvestReport:
    server = servers.servers.get(server_name)
    if server is None:
        raise SeedError(
            f"no [servers.{server_name}] in servers.toml; declared: {', '.join(sorted(servers.servers))}"
        )
    seed_file = seeds_dir / f"{server_name}.json"
    report = HarvestReport(seed_file)
    if seed_file.exists():
        try:
            seed = json.loads(seed_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise SeedError(f"{seed_file}: line {exc.lineno}: invalid JSON: {exc.msg}") from None
    else:
        seed = new_seed(server, f"harvested live: tools/list of {describe_launch(server)}")
    # imported here: the rest of this module (merging, seed files) serves `import` and `add`,
    # whose modules `servers` and `--help` load too, without the MCP client
    from router.facade.backend_watch import fetch_tool_list

    live_tools = await fetch_tool_list(server, servers, placeholders)
    write_checked_seed(seed_file, merge(seed, live_tools, accept_changed, report))
    return report


def describe_launch(server: ServerConfig) -> str:
    """How the server is started, in one line, for a seed's `source`."""
    return server.url or " ".join([server.command or "", *server.args])


def new_seed(server: ServerConfig, source: str) -> dict[str, Any]:
    return {"server": server.name, "profile": server.profile, "source": source, "tools": []}


def write_checked_seed(seed_file: Path, seed: dict[str, Any]) -> None:
    """Validate with the model `context-router catalog` loads seeds with, then write whole: a
    seed the next load would refuse is never written."""
    try:
        SeedFile.model_validate(seed)
    except ValidationError as exc:
        raise SeedError(
            f"{seed_file}: the harvested seed is invalid: {first_field_error(exc)}; nothing written"
        ) from None
    write_atomically(seed_file, json.dumps(seed, ensure_ascii=False, indent=2) + "\n")
