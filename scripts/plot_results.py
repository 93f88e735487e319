#!/usr/bin/env python3
"""Paper-style figures from nkbench results.

  /usr/bin/python3 scripts/plot_results.py RESULTS.json [MORE.json|.csv ...] --out DIR [--format png,svg]

For each (type, ISA, thread count) in the input, writes into DIR: GFLOPS per case with the
measured peak of the cores used (gflops-*), speed relative to libxsmm with geometric means
(ratio-*), compile / JIT cost per backend (compile-*), the mlir vs mlir-default nanokernel
ablation (ablation-*), and ratios.md; where a (type, ISA) ran at several thread counts, the
speed-up over the fewest threads against the ideal (scaling-*). Groups of more than one thread
have '-Nt' in their file names. Bars of rows flagged noisy are hatched, and their ratios marked
'(noisy)' in ratios.md; they stay in the geomeans.
Bad input is one line on stderr and exit status 2.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from nkplots.groups import group_results  # noqa: E402
from nkplots.results import InputError, load_results  # noqa: E402

FORMATS = ("png", "svg", "pdf")
BAD_INPUT = 2


def formats_option(text: str) -> list[str]:
    formats = [part.strip().lower() for part in text.split(",") if part.strip()]
    unknown = [part for part in formats if part not in FORMATS]
    if not formats or unknown:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(FORMATS)}")
    return list(dict.fromkeys(formats))


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="Paper-style figures from nkbench CSV/JSON results.")
    parser.add_argument("results", nargs="+", help="nkbench result files (.json carries the run's metadata)")
    parser.add_argument("--out", required=True, type=Path, help="folder for the figures and ratios.md")
    parser.add_argument("--format", type=formats_option, default=["png", "svg"],
                        help="comma-separated: png, svg, pdf (default: png,svg)")
    return parser.parse_args(argv)


def fail(message: str) -> int:
    print(f"plot_results: {message}", file=sys.stderr)
    return BAD_INPUT


def main(argv=None) -> int:
    arguments = parse_arguments(argv)
    try:
        groups = group_results(load_results(arguments.results))
    except InputError as error:
        return fail(str(error))
    try:
        # Imported only now, so that bad input is reported even where matplotlib is missing.
        from nkplots.render import render_all
    except ImportError as error:
        return fail(f"needs matplotlib ({error}); on Debian: apt-get install python3-matplotlib, "
                    "and run with /usr/bin/python3")
    try:
        arguments.out.mkdir(parents=True, exist_ok=True)
        written, notes = render_all(groups, arguments.out, arguments.format)
    except OSError as error:
        return fail(f"{error.filename or arguments.out}: cannot write: {error.strerror or error}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
