"""`make bench` = `python -m bench`: run every module in BENCHES, print each result, and
write them into docs/benchmarks.md (between the bench markers), bench/results.json and the chart.

A bench module offers `run(options) -> Section` (bench/report.py).
"""

import argparse
import importlib
import sys
import time

from bench.report import Options, update_sections, write_benchmarks_page, write_results

BENCHES = [
    "bench.quality",
    "bench.mixed_quality",
    "bench.latency",
    "bench.facade_bench",
    "bench.startup",
    "bench.page_tokens",
    "bench.signatures",
    "bench.warm_start",
    "bench.page_quality",
    "bench.static_encode",
    "bench.install_size",
    "bench.node_size",
    "bench.operation",
    "bench.redaction",
]
SIZES = (1_000, 10_000, 100_000, 250_000)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, SIZES)),
        help="catalog sizes for the latency benchmark (comma-separated)",
    )
    parser.add_argument("--only", action="append", help="run only this bench module (repeatable)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    parser.add_argument(
        "--update",
        action="store_true",
        help="with --only: replace those modules' sections of docs/benchmarks.md and bench/results.json",
    )
    parser.add_argument(
        "--dev",
        action="store_true",
        help="quality on the development sets only, leaving the held-out sets unseen (implies --no-write)",
    )
    args = parser.parse_args(argv)
    options = Options(
        sizes=tuple(int(s) for s in args.sizes.split(",")),
        write=not (args.no_write or args.dev),
        development_only=args.dev,
    )
    sections = []
    for name in BENCHES:
        if args.only and name not in args.only and name.rsplit(".", 1)[-1] not in args.only:
            continue
        started = time.perf_counter()
        section = importlib.import_module(name).run(options)
        print(
            f"\n## {section.title}  ({time.perf_counter() - started:.0f} s)\n\n{section.markdown}\n",
            flush=True,
        )
        sections.append(section)
    if options.write and not args.only:
        write_benchmarks_page(sections)
        write_results(sections)
        print("results written to docs/benchmarks.md and bench/results.json")
    elif options.write and args.update:
        update_sections(sections)
        print("these sections replaced in docs/benchmarks.md and bench/results.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
