#!/usr/bin/python3
"""Turns the JSON of spatialhash_bench into plots (PNG) for docs/benchmarks.md.

    /usr/bin/python3 bench/plot.py build-bench/bench.json [more.json ...] --out docs/bench

Writes, for each operation and point order asked for:
  time_vs_n_<op>_<order>.png   median time against n (log-log), one panel per workload,
                               one colour per engine, solid = most threads, dashed = 1 thread
  bars_<op>_<order>.png        time per engine at one n (the largest with a nanoflann result,
                               or --bars-n), one group of bars per workload, most threads
and, with --markdown FILE, the same figures as Markdown tables (one per operation, order and n:
median ms and the ratio to nanoflann, per engine and thread count, a column per workload).
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

OP_TITLES = {"build": "build", "rebuild_lists": "rebuild + full lists",
             "rebuild_rows": "rebuild + rows (NeighborRows)", "pairs": "pairs once",
             "counts": "counts only", "ball": "ball queries",
             "ball_rows": "ball queries as rows",
             "ball_each": "ball queries one call each"}


def engine_colors(engines):
    """A distinct colour per engine: black for nanoflann, the outside peer; ours take tab10's
    ten, then Dark2's eight (tab10 alone gave an eleventh contender the first one's colour)."""
    palette = ([plt.get_cmap("tab10")(i) for i in range(10)]
               + [plt.get_cmap("Dark2")(i) for i in range(8)])
    ours = [e for e in engines if e != "nanoflann"]
    colors = {e: palette[i % len(palette)] for i, e in enumerate(ours)}
    colors["nanoflann"] = "black"
    return colors


def ok_rows(results, op, order):
    return [r for r in results
            if r["op"] == op and r["order"] == order and r["status"] == "ok" and r["median_ms"]]


def count_label(n):
    if n >= 1_000_000 and n % 100_000 == 0:
        return f"{n / 1e6:g}M"
    if n >= 1000 and n % 100 == 0:
        return f"{n / 1e3:g}k"
    return str(n)


def plot_time_vs_n(data, op, order, out_dir, engines, colors):
    rows = ok_rows(data["results"], op, order)
    if len({r["n"] for r in rows}) < 2:
        return None  # a single size makes no line
    workloads = [w for w in data["workloads"] if any(r["workload"] == w["key"] for r in rows)]
    cols = min(3, len(workloads))
    lines = math.ceil(len(workloads) / cols)
    fig, axes = plt.subplots(lines, cols, figsize=(5 * cols, 3.8 * lines), squeeze=False)
    most = max(r["threads"] for r in rows)
    for ax, w in zip(axes.flat, workloads):
        mine = [r for r in rows if r["workload"] == w["key"]]
        for engine in engines:
            for threads in sorted({r["threads"] for r in mine}, reverse=True):
                pts = sorted((r["n"], r["median_ms"]) for r in mine
                             if r["engine"] == engine and r["threads"] == threads)
                if not pts:
                    continue
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                        color=colors[engine], linestyle="-" if threads == most else "--",
                        label=f"{engine} ({threads} thr)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{w['key']} {w['name']}", fontsize=10)
        ax.set_xlabel("points")
        ax.set_ylabel("median ms")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(workloads):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8)
    fig.suptitle(f"{OP_TITLES.get(op, op)}, {order} points: time against n "
                 f"(solid: {most} threads, dashed: fewer)")
    fig.tight_layout(rect=(0, 0.04 + 0.025 * math.ceil(len(labels) / 6), 1, 0.95))
    path = os.path.join(out_dir, f"time_vs_n_{op}_{order}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_bars(data, op, order, out_dir, engines, colors, bars_n):
    rows = ok_rows(data["results"], op, order)
    if not rows:
        return None
    most = max(r["threads"] for r in rows)
    rows = [r for r in rows if r["threads"] == most]
    if bars_n is None:
        with_peer = [r["n"] for r in rows if r["engine"] == "nanoflann"]
        bars_n = max(with_peer) if with_peer else max(r["n"] for r in rows)
    rows = [r for r in rows if r["n"] == bars_n]
    if not rows:
        return None
    workloads = [w["key"] for w in data["workloads"] if any(r["workload"] == w["key"] for r in rows)]
    present = [e for e in engines if any(r["engine"] == e for r in rows)]
    width = 0.8 / max(1, len(present))
    all_ms = [r["median_ms"] for r in rows if r["engine"] in present]
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(workloads) + 2), 4.5))
    for k, engine in enumerate(present):
        xs, ys = [], []
        for i, w in enumerate(workloads):
            match = [r["median_ms"] for r in rows if r["workload"] == w and r["engine"] == engine]
            if match:
                xs.append(i + (k - (len(present) - 1) / 2) * width)
                ys.append(match[0])
        ax.bar(xs, ys, width=width, color=colors[engine], label=engine)
    ax.set_yscale("log")
    ax.set_ylim(min(all_ms) / 2, max(all_ms) * 2)  # every bar visible on the log axis
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels(workloads)
    ax.set_ylabel("median ms (log)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    ax.set_title(f"{OP_TITLES.get(op, op)}, {order}, n = {count_label(bars_n)}, {most} threads")
    fig.tight_layout()
    path = os.path.join(out_dir, f"bars_{op}_{order}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def markdown_tables(data, ops, orders):
    """Markdown tables of median ms (and x nanoflann) for docs/benchmarks.md."""
    results = data["results"]
    out = []
    for op in ops:
        for order in orders:
            rows = [r for r in results if r["op"] == op and r["order"] == order]
            for n in sorted({r["n"] for r in rows}):
                at_n = [r for r in rows if r["n"] == n]
                workloads = [w["key"] for w in data["workloads"]
                             if any(r["workload"] == w["key"] for r in at_n)]
                lines = list(dict.fromkeys((r["engine"], r["threads"]) for r in at_n))
                lines.sort(key=lambda line: line[1])
                out.append(f"**{OP_TITLES.get(op, op)}, {order}, n = {count_label(n)}**: "
                           "median ms (x nanoflann at the same thread count)\n")
                out.append("| engine | threads | " + " | ".join(workloads) + " |")
                out.append("|---|---:|" + "---:|" * len(workloads))
                for engine, threads in lines:
                    cells = []
                    for w in workloads:
                        match = [r for r in at_n if r["workload"] == w and r["engine"] == engine
                                 and r["threads"] == threads]
                        if not match:
                            cells.append("")
                        elif match[0]["status"] != "ok":
                            cells.append(match[0]["status"])
                        else:
                            r = match[0]
                            ms = r["median_ms"]
                            text = f"{ms:.0f}" if ms >= 1000 else f"{ms:.4g}"
                            if r.get("vs_nanoflann") and engine != "nanoflann":
                                text += f" ({r['vs_nanoflann']:.3g}x)"
                            if r["check"].startswith("DIFFERS"):
                                text += " DIFFERS"
                            cells.append(text)
                    if all(c in ("", "skipped") for c in cells):
                        continue  # capped at this n everywhere (--cap)
                    out.append(f"| {engine} | {threads} | " + " | ".join(cells) + " |")
                out.append("")
    return "\n".join(out)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+",
                        help="file(s) written by spatialhash_bench --json (results are merged)")
    parser.add_argument("--out", default="docs/bench", help="output folder (default docs/bench)")
    parser.add_argument("--ops", default="all", help="operations to plot (default all present)")
    parser.add_argument("--orders", default="shuffled,sorted", help="point orders to plot")
    parser.add_argument("--bars-n", default=None, type=int, help="n of the bar charts")
    parser.add_argument("--markdown", default=None, help="also write Markdown tables here")
    args = parser.parse_args(argv)
    data = None
    for path in args.json:
        with open(path, encoding="utf-8") as f:
            part = json.load(f)
        if part.get("schema") != 1:
            sys.exit(f"{path}: not a spatialhash_bench schema 1 file")
        if data is None:
            data = part
            continue
        known = {w["key"] for w in data["workloads"]}
        data["workloads"] += [w for w in part["workloads"] if w["key"] not in known]
        data["results"] += part["results"]
    os.makedirs(args.out, exist_ok=True)
    results = data["results"]
    engines = list(dict.fromkeys(r["engine"] for r in results))
    colors = engine_colors(engines)
    ops = list(dict.fromkeys(r["op"] for r in results))
    if args.ops != "all":
        ops = [o for o in args.ops.split(",") if o in ops]
    orders = [o for o in args.orders.split(",") if any(r["order"] == o for r in results)]
    written = []
    for op in ops:
        for order in orders:
            for path in (plot_time_vs_n(data, op, order, args.out, engines, colors),
                         plot_bars(data, op, order, args.out, engines, colors, args.bars_n)):
                if path:
                    written.append(path)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(markdown_tables(data, ops, orders) + "\n")
        written.append(args.markdown)
    for path in written:
        print(path)
    if not written:
        sys.exit("no successful results to plot")


if __name__ == "__main__":
    main(sys.argv[1:])
