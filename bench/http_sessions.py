"""Sessions opened and never closed against `serve --http` (issue 35, item 6).

One process sends SESSIONS initialize requests (default 10,050), never closing a session,
and the router's resident memory is read as it goes; then a new client initializes and
searches. Three runs:
- the defaults ([http]: 1,000 sessions, 100 per client), every session under one client name;
- the defaults, every session under its own name (so the total bound is the one reached);
- bounds raised past the count (what the SDK's defaults amounted to): memory per session.

Run: python -m bench.http_sessions [--sessions 10050]
"""

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2

from bench.http_flood import (
    MINIMAL_SERVERS,
    POST_HEADERS,
    initialize_request,
    mcp_session,
    router_with_open_file_limit,
    search,
    seeded_db,
)

SAMPLE_EVERY = 1000


@dataclass
class SessionsRun:
    label: str
    opened: int
    statuses: dict[int, int]
    seconds: float
    rss_start_kib: int
    rss_samples: list[tuple[int, int]]  # (sessions opened, RSS KiB)
    new_client_s: float | None


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def run_once(label: str, http_settings: str, sessions: int, one_name: bool, scratch: Path) -> SessionsRun:
    run_dir = scratch / label.replace(" ", "-")
    run_dir.mkdir()
    db = seeded_db(run_dir / "r.db")
    servers = run_dir / "servers.toml"
    servers.write_text(f"[http]\n{http_settings}\n{MINIMAL_SERVERS}", encoding="utf-8")
    with router_with_open_file_limit(db, servers, 4096, run_dir / "serve.stderr") as (process, port):
        url = f"http://127.0.0.1:{port}/mcp"
        start = rss_kib(process.pid)
        samples = []
        statuses: dict[int, int] = {}
        started = time.monotonic()
        with httpx2.Client(timeout=60) as http:
            for index in range(1, sessions + 1):
                body = initialize_request("leaky" if one_name else f"leaky-{index}")
                status = http.post(url, json=body, headers=POST_HEADERS).status_code
                statuses[status] = statuses.get(status, 0) + 1
                if index % SAMPLE_EVERY == 0 or index in (100, sessions):
                    samples.append((index, rss_kib(process.pid)))
        seconds = time.monotonic() - started
        new_client_s = None
        began = time.monotonic()
        try:
            client, headers = mcp_session(url, timeout_s=60)
            if search(client, url, headers) == 200:
                new_client_s = time.monotonic() - began
            client.close()
        except httpx2.HTTPError:
            pass
    return SessionsRun(label, sessions, statuses, seconds, start, samples, new_client_s)


def report(runs: list[SessionsRun]) -> list[str]:
    lines = [
        "| run | sessions opened | answers | seconds | RSS at start | RSS after 100 | RSS at the end | new client |"
    ]
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for run in runs:
        after_100 = next(rss for opened, rss in run.rss_samples if opened == 100)
        lines.append(
            f"| {run.label} | {run.opened:,} | {run.statuses} | {run.seconds:.1f} | {run.rss_start_kib / 1024:.1f} MB | "
            f"{after_100 / 1024:.1f} MB | {run.rss_samples[-1][1] / 1024:.1f} MB | "
            + (f"{run.new_client_s:.3f} s" if run.new_client_s is not None else "FAILED")
            + " |"
        )
    unbounded = runs[-1]
    grown = unbounded.rss_samples[-1][1] - unbounded.rss_samples[0][1]
    per_session = grown / (unbounded.rss_samples[-1][0] - unbounded.rss_samples[0][0])
    lines.append(f"- memory per open session (unbounded run, RSS growth / sessions): {per_session:.1f} KiB")
    for run in runs[:-1]:
        lines.append(
            f"- {run.label}: RSS per {SAMPLE_EVERY:,} sessions opened: "
            + ", ".join(f"{rss / 1024:.1f}" for _, rss in run.rss_samples)
            + " MB"
        )
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.http_sessions")
    parser.add_argument("--sessions", type=int, default=10_050)
    args = parser.parse_args(argv)
    unbounded = f"max_sessions = {args.sessions * 2}\nmax_sessions_per_client = {args.sessions * 2}"
    with tempfile.TemporaryDirectory() as scratch:
        runs = [
            run_once("defaults, one client", "", args.sessions, True, Path(scratch)),
            run_once("defaults, a name each", "", args.sessions, False, Path(scratch)),
            run_once("bounds above the count", unbounded, args.sessions, False, Path(scratch)),
        ]
    print("\n".join(report(runs)))
    bounded_ok = all(run.new_client_s is not None and set(run.statuses) == {200} for run in runs[:2])
    return 0 if bounded_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
