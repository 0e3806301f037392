"""Redaction in linear time, and a backend's stderr flood against the router (issue 35 item 2).

- `Redactor.text` on texts of one repeated character, of random name characters and `=`, and
  of ordinary log lines, at growing sizes: the time per size and its growth from 256 KiB to
  1 MiB (linear: about 4). Bar: 1 MiB in under 1 s.
- Every pattern the redactor runs (its own and detect-secrets' shapes, as rewritten by
  router/redaction/secret_shapes.py) on runs of each kind of character after each kind of label, at
  8,000 and 32,000 characters; the steepest three timed at four sizes (linear: ×4 a step).
- A real router over stdio whose call to a real backend (tests/servers/noisy.py) floods its
  stderr (one 30,000-character line; 200,000 characters without a newline; 10 MB of
  258-character lines): how long searches sent meanwhile take (bar: 1 s each), how long the
  router takes to exit after its stdin closes or SIGTERM (bar: 5 s), and how long the
  flooding call takes. Run alone: `python -m bench.redaction`.
"""

import json
import os
import random
import re
import runpy
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.paths import PROJECT_ROOT
from bench.report import Options, Section, markdown_table
from router.catalog.load import load_catalog
from router.db import connect
from router.facade.jsonrpc_lines import LineClient
from router.paths import SEEDS_DIR
from router.redaction import redactor as redact
from router.redaction.secret_shapes import KEYWORD_ASSIGNMENT, plugin_shapes

KIB = 1024
SIZES = (64 * KIB, 256 * KIB, 1024 * KIB)
SINGLE_CHARACTERS = "zA0_ .-=:/'\"\n\t+@"
NAME_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-="
LOG_LINES = (
    "2026-12-04T10:00:00Z INFO merge: gap check passed for branch main (3 files)\n",
    "WARNING router.facade: backend git answered in 812 ms\n",
    'DEBUG request {"method": "tools/call", "params": {"name": "read_file"}}\n',
)
# pattern fuzzing: the runs and the labels before them
FUZZ_RUNS = [
    *SINGLE_CHARACTERS,
    "a=",
    "a:",
    "a ",
    "a.",
    "x-",
    "ab/",
    "eyJ",
    "//",
    "://",
    "sk-",
    "key ",
    "1 ",
    "?a=",
]
FUZZ_LABELS = ["", "key", "password", "token=", "eyJ", "//", "https://x/?", "my password is ", 'a="', "clkey"]
FUZZ_SIZES = (8_000, 32_000)
# the steepest patterns of the fuzz, timed again at these sizes
STEEPEST_SHOWN = 3
SERIES_SIZES = (8_000, 32_000, 128_000, 512_000)
# a pattern faster than this on the larger text is not timed: noise would be its growth
MIN_TIMED_S = 0.002
NOISY_SERVER = PROJECT_ROOT / "tests" / "servers" / "noisy.py"
VENV_BIN = Path(sys.executable).parent
SEARCHES_DURING_FLOOD = 10
SEARCH_BAR_S, EXIT_BAR_S = 1.0, 5.0


def _texts(size: int) -> dict[str, str]:
    rng = random.Random(35)
    texts = {f"{c!r} repeated": c * size for c in SINGLE_CHARACTERS}
    texts["random name characters and ="] = "".join(rng.choices(NAME_CHARACTERS, k=size))
    texts["ordinary log lines"] = "".join(rng.choices(LOG_LINES, k=size // 60))[:size]
    return texts


def _seconds(work, *args) -> float:
    started = time.perf_counter()
    work(*args)
    return time.perf_counter() - started


def redaction_sizes() -> tuple[list[list[object]], dict]:
    redact.Redactor({}).text("warm up: detect-secrets' shapes are loaded once")
    timings: dict[str, list[float]] = {}
    for size in SIZES:
        for name, text in _texts(size).items():
            timings.setdefault(name, []).append(_seconds(redact.Redactor({}).text, text))
    rows = [
        [name, *(f"{t:.3f}" for t in times), f"{times[-1] / max(times[-2], 1e-9):.1f}"]
        for name, times in timings.items()
    ]
    return rows, timings


def _patterns() -> dict[str, re.Pattern]:
    patterns = {
        name: getattr(redact, name)
        for name in (
            "PRIVATE_KEY_BLOCK",
            "URL",
            "URL_PARAMETER",
            "AUTH_HEADER",
            "COOKIE_HEADER",
            "CURL_USER",
            "NETRC_PASSWORD",
            "PROSE_PASSWORD",
            "PROSE_SECRET",
            "QUOTED",
            "LINE",
            "INLINE",
            "BASE64_CANDIDATE",
            "HIGH_ENTROPY_CANDIDATE",
        )
    }
    patterns |= {f"token: {kind}": pattern for kind, pattern in redact.TOKEN_PATTERNS}
    patterns |= {f"{shape.kind} #{i}": shape.pattern for i, shape in enumerate(plugin_shapes())}
    patterns["keyword assignment windows"] = KEYWORD_ASSIGNMENT
    return patterns


def _growth(
    pattern: re.Pattern, label: str, run: str, sizes: tuple[int, int], runs: int = 5
) -> tuple[float, float]:
    """The pattern's time on the larger text over the smaller's, and the larger's time: the
    best of several, taken in turns, so a burst of load lands on both sizes alike."""
    small, large = (label + run * (n // len(run)) for n in sizes)
    times = [(_seconds(pattern.sub, "", small), _seconds(pattern.sub, "", large)) for _ in range(runs)]
    t_small, t_large = min(t for t, _ in times), min(t for _, t in times)
    return t_large / max(t_small, 1e-7), t_large


def steepest_patterns() -> list[list[object]]:
    """The patterns whose time grew most for four times the input, over runs of each kind
    after each label, each then timed at four sizes: a quadratic pattern's time grows 16 times
    from one size to the next, a linear one's 4 times (a single growth figure on a loaded
    machine is noise as often as not; the series shows which it is)."""
    patterns = _patterns()
    growths = []
    for name, pattern in patterns.items():
        for label in FUZZ_LABELS:
            for run in FUZZ_RUNS:
                growth, t_large = _growth(pattern, label, run, FUZZ_SIZES)
                if t_large >= MIN_TIMED_S:  # faster: too fast to tell growth from noise
                    growths.append((growth, name, label, run))
    rows: list[list[object]] = []
    for growth, name, label, run in sorted(growths, reverse=True)[:STEEPEST_SHOWN]:
        texts = [label + run * (n // len(run)) for n in SERIES_SIZES]
        series = [min(_seconds(patterns[name].sub, "", text) for _ in range(5)) for text in texts]
        rows.append(
            [f"{name} on {label!r} + {run!r} × n", f"{growth:.1f}", *(f"{t * 1000:.1f}" for t in series)]
        )
    return rows


def _declare_noisy(scratch: Path) -> tuple[Path, Path]:
    tools = runpy.run_path(str(NOISY_SERVER))["TOOLS"]  # its tools/list, exactly
    catalog = scratch / "noisy.jsonl"
    catalog.write_text(
        "".join(json.dumps(tool | {"server": "noisy", "profile": "custom"}) + "\n" for tool in tools),
        encoding="utf-8",
    )
    db = scratch / "flood.db"
    conn = connect(db)
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[catalog])
    conn.close()
    servers = scratch / "servers.toml"
    servers.write_text(
        f'[servers.noisy]\nprofile = "custom"\ncommand = {json.dumps(sys.executable)}\n'
        f"args = [{json.dumps(str(NOISY_SERVER))}]\n",
        encoding="utf-8",
    )
    return db, servers


def _answer(client: LineClient, request_id: int, timeout_s: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        message = json.loads(client.read_line(timeout_s=max(0.01, deadline - time.monotonic())))
        if message.get("id") == request_id:
            return message


def _search_s(client: LineClient) -> float:
    started = time.perf_counter()
    request_id = client.send(
        "tools/call", {"name": "mcp_search_tools", "arguments": {"query": "current time"}}
    )
    _answer(client, request_id)
    return time.perf_counter() - started


# (the router answers every request it read before its stdin closed, so the first call ends
# soon after the searches: its exit is timed from stdin closing, the call's end included)
FLOODS = {
    "30,000-character lines every 50 ms, then stdin closes": (
        {"chars": 30_000, "newline": True, "hold_s": 4, "every_s": 0.05},
        "stdin",
    ),
    "200,000 characters without a newline every 50 ms, then SIGTERM": (
        {"chars": 200_000, "newline": False, "hold_s": 30, "every_s": 0.05},
        "sigterm",
    ),
    "10 MB of 258-character lines at once": ({"chars": 257, "lines": 40_000, "hold_s": 0}, "answer"),
}


def flood(scratch: Path, args: dict, ending: str) -> dict[str, float]:
    db, servers = _declare_noisy(scratch)
    argv = [str(VENV_BIN / "context-router"), "serve", "--db", str(db), "--servers", str(servers)]
    with (scratch / "router.stderr").open("wb") as stderr:
        client = LineClient([*argv, "--workspace", str(scratch), "--no-wake-on-search"], stderr=stderr)
        try:
            before = [_search_s(client) for _ in range(5)]
            started = time.perf_counter()
            call = client.send(
                "tools/call",
                {"name": "mcp_call_tool", "arguments": {"toolName": "flood_stderr", "args": args}},
            )
            if ending == "answer":
                _answer(client, call)
                return {"before_s": max(before), "call_s": time.perf_counter() - started}
            time.sleep(0.5)
            during = [_search_s(client) for _ in range(SEARCHES_DURING_FLOOD)]
            stopped = time.perf_counter()
            if ending == "stdin":
                client.process.stdin.close()  # type: ignore[union-attr]
            else:
                client.process.send_signal(signal.SIGTERM)
            client.process.wait(timeout=60)
            return {
                "before_s": max(before),
                "median_s": statistics.median(during),
                "max_s": max(during),
                "exit_s": time.perf_counter() - stopped,
            }
        finally:
            client.close()


def run(options: Options) -> Section:
    size_rows, size_data = redaction_sizes()
    steepest = steepest_patterns()
    floods: dict[str, dict[str, float]] = {}
    for name, (args, ending) in FLOODS.items():
        with tempfile.TemporaryDirectory(prefix="flood-bench-") as scratch:
            floods[name] = flood(Path(scratch), args, ending)
    worst_1mib = max(times[-1] for times in size_data.values())
    flood_rows = [
        [
            name,
            f"{r['before_s'] * 1000:.0f}",
            f"{r['median_s'] * 1000:.0f}" if "median_s" in r else "",
            f"{r['max_s'] * 1000:.0f}" if "max_s" in r else "",
            f"{r['exit_s']:.2f}" if "exit_s" in r else "",
            f"{r['call_s']:.2f}" if "call_s" in r else "",
        ]
        for name, r in floods.items()
    ]
    worst_search = max(r.get("max_s", 0.0) for r in floods.values())
    worst_exit = max(r.get("exit_s", 0.0) for r in floods.values())
    markdown = (
        f"Load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs.\n\n"
        "`Redactor.text`, seconds by input size (growth: 1 MiB time / 256 KiB time; linear ≈ 4):\n\n"
        + markdown_table(["input", *(f"{s // KIB} KiB s" for s in SIZES), "growth"], size_rows)
        + f"\n\n- slowest 1 MiB: {worst_1mib:.3f} s (bar: under 1 s)\n\n"
        "Each pattern on runs of each kind after each label: the steepest growths from 8,000 to "
        "32,000 characters, each timed again at four sizes (ms; linear: ×4 a step, quadratic: ×16):\n\n"
        + markdown_table(["pattern and input", "growth", *(f"{n:,}" for n in SERIES_SIZES)], steepest)
        + "\n\n"
        "A router over stdio while its backend floods stderr (searches from the same client, "
        f"{SEARCHES_DURING_FLOOD} sent one after another while the call runs):\n\n"
        + markdown_table(
            ["flood", "search before, max ms", "search during, median ms", "max ms", "exit s", "call s"],
            flood_rows,
        )
        + f"\n\n- slowest search during a flood: {worst_search:.3f} s (bar: {SEARCH_BAR_S:g} s); "
        f"slowest exit: {worst_exit:.2f} s (bar: {EXIT_BAR_S:g} s)\n"
    )
    data = {"sizes_s": size_data, "steepest_patterns": steepest, "floods": floods}
    return Section("Redaction and stderr floods", markdown, data)


def main() -> int:
    section = run(Options(sizes=(), write=False))
    print(f"## {section.title}\n\n{section.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
