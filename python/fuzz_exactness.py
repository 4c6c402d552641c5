"""Exactness fuzz for long runs: consecutive seeds of python/tests/fuzz_cases.py (the cases of
test_fuzz_smoke.py, which runs seeds 0..1023) until a time budget is spent, each compared with
the float64 oracle. Each failure is printed as one JSON line (seed, generator, engine, dtype,
dim, problems); a summary line follows. Exit status 1 if any case failed.

Usage (against a built module, e.g. build-test/python):

    PYTHONPATH=build-test/python /usr/bin/python3 python/fuzz_exactness.py \\
        --seconds 600 --first-seed 1000 [--threads 2]

Reproduce one seed with --first-seed SEED --count 1.
"""

import argparse
import collections
import json
import sys
import time
from pathlib import Path

import numpy as np

# Python puts this script's folder first on sys.path, and it holds the source package (without
# the compiled _core): drop it so the built module on PYTHONPATH is imported, and add tests/.
_HERE = Path(__file__).resolve().parent
sys.path = [str(_HERE / "tests")] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]
import fuzz_cases  # noqa: E402


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    parser.add_argument("--first-seed", type=int, default=1024, help="first seed (default 1024)")
    parser.add_argument("--count", type=int, default=None, help="stop after this many seeds")
    parser.add_argument("--threads", type=int, default=1, help="Index threads (default 1)")
    return parser.parse_args(argv)


def run_seed(seed: int, threads: int):
    """(plan, problems): problems is None for a documented refusal, [] for a match."""
    plan = fuzz_cases.plan(seed)
    try:
        problems = fuzz_cases.check_case(plan.case, plan.engine, threads, plan.dtype,
                                         np.random.default_rng(seed))
    except Exception as error:  # a harness error is reported like a discrepancy
        problems = [f"harness raised {type(error).__name__}: {error}"]
    return plan, problems


def failure_line(plan, problems, threads) -> str:
    return json.dumps(dict(seed=plan.seed, generator=plan.generator, engine=plan.engine,
                           dtype=plan.dtype.__name__, dim=plan.dim, threads=threads,
                           n=len(plan.case.points), radius=plan.case.radius,
                           box=plan.case.box, problems=problems[:5]), default=str)


def main(argv=None) -> int:
    args = parse_arguments(argv)
    start = time.monotonic()
    tally = collections.Counter()
    seed = args.first_seed
    while time.monotonic() - start < args.seconds and (
            args.count is None or seed < args.first_seed + args.count):
        plan, problems = run_seed(seed, args.threads)
        if problems is None:
            tally["refused"] += 1
        elif problems:
            tally["failed"] += 1
            print(failure_line(plan, problems, args.threads), flush=True)
        else:
            tally["passed"] += 1
        seed += 1
    print(f"summary: seeds {args.first_seed}..{seed - 1} ({seed - args.first_seed} cases, "
          f"threads {args.threads}, {time.monotonic() - start:.0f} s): {tally['passed']} passed, "
          f"{tally['failed']} failed, {tally['refused']} refused (documented lattice limits)",
          flush=True)
    return 1 if tally["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
