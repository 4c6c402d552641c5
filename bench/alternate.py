#!/usr/bin/python3
"""Two builds of spatialhash_bench compared on a noisy machine: runs BEFORE and AFTER one after the
other, round after round, with the same flags, and prints for every table row (workload, size,
order, operation, engine, threads) the minimum and the median of each binary's figures and their
ratios (before / after: above 1, AFTER is faster).

    bench/alternate.py OLD/bench/spatialhash_bench build-bench/bench/spatialhash_bench 5 \\
        --workloads W1,W2 --sizes 1M,4M --ops build --threads 2 --engines cell_list --reps 7

Build the previous commit in a git worktree for BEFORE (docs/benchmarks.md, "Noise"). Exits 1 if
a run fails or prints no rows, or if the two binaries print different rows.

Where both binaries print the `min cpu` column (the slowest CPU's speed around the row), the last
two columns are the medians' ratio over the rounds whose two rows both ran on equal CPUs (min cpu
at least 0.85) and how many rounds those were: on a VM whose host slows one vCPU for minutes, a
round with one side in such a spell says little about the code.
"""

import re
import statistics
import subprocess
import sys

# "W2 n=1M shuffled build" heads each table; its rows start with the engine and the threads.
TABLE = re.compile(r"^(W\w+) n=(\S+) (shuffled|sorted) (\S+)")
ROW = re.compile(r"^  ([a-z_]+) +(\d+) +([0-9.]+) +[0-9.]+ ")
# A row's min cpu column (the 10th field), absent from binaries before it; "-" when not measured.
MIN_CPU_FIELD = 9
EQUAL_CPUS = 0.85


def min_cpu(line):
    """The row's min cpu figure, or None when the binary does not print one."""
    fields = line.split()
    try:
        return float(fields[MIN_CPU_FIELD])
    except (IndexError, ValueError):
        return None


def figures(binary, flags):
    """(milliseconds, min cpu or None) of each row of one run of `binary`, keyed by the row's
    name."""
    run = subprocess.run([binary, *flags], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"{binary} exited with {run.returncode}:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    rows, table = {}, None
    for line in run.stdout.splitlines():
        if m := TABLE.match(line):
            table = " ".join(m.groups())
        elif (m := ROW.match(line)) and table is not None:
            rows.setdefault(f"{table} {m[1]} {m[2]} thr", (float(m[3]), min_cpu(line)))
        elif line.startswith("===="):
            table = None  # the summary tables repeat the rows
    if not rows:
        sys.exit(f"{binary} printed no table rows")
    return rows


def main():
    if len(sys.argv) < 4 or not sys.argv[3].isdigit() or int(sys.argv[3]) < 1:
        sys.exit(__doc__)
    before, after, rounds, flags = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    runs = {"before": [], "after": []}
    for _ in range(rounds):
        runs["before"].append(figures(before, flags))
        runs["after"].append(figures(after, flags))
    names = list(runs["before"][0])
    if any(list(r) != names for r in runs["before"] + runs["after"]):
        sys.exit("the two binaries printed different rows")
    print(f"{rounds} alternated rounds; ms, minimum / median; ratio = before / after")
    print(f"{'row':44s} {'before':>17s} {'after':>17s} {'min ratio':>9s} {'med ratio':>9s} "
          f"{'equal cpus':>14s}")
    for name in names:
        b = [r[name][0] for r in runs["before"]]
        a = [r[name][0] for r in runs["after"]]
        bmin, bmed, amin, amed = min(b), statistics.median(b), min(a), statistics.median(a)
        # The rounds whose two rows both ran on equal CPUs.
        equal = [(rb[name][0], ra[name][0]) for rb, ra in zip(runs["before"], runs["after"])
                 if all(r[name][1] is not None and r[name][1] >= EQUAL_CPUS for r in (rb, ra))]
        if equal:
            ratio = statistics.median(x for x, _ in equal) / statistics.median(y for _, y in equal)
            equal_text = f"{ratio:8.3f}x ({len(equal)})"
        else:
            equal_text = f"{'-':>9s} (0)"
        print(f"{name:44s} {bmin:8.2f} /{bmed:8.2f} {amin:8.2f} /{amed:8.2f} "
              f"{bmin / amin:8.3f}x {bmed / amed:8.3f}x {equal_text:>14s}")


if __name__ == "__main__":
    main()
