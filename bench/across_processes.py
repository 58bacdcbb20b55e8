#!/usr/bin/env python3
"""Runs bench_kernels in several processes and pools their ratios to oneDNN.

Past the cache, one process's repetitions agree with each other far better
than processes agree with each other: on a 2-vCPU guest the same build's
bf16 forward at 1024 MiB gave fast/oneDNN 0.83-0.94 in one process and
1.44-1.46 in the next (bench/README.md). A verdict at such sizes, or a
comparison of two builds, therefore takes several processes.

  across_processes.py [--processes N] [--keep DIR] BENCH [BENCH ...] -- ARGS...

Each of N rounds (default 5) runs every BENCH once, in the order given, so
that builds compared alternate and meet the same conditions, with ARGS (the
problems, repetitions and time, as for bench_kernels) and --benchmark_out.
A line per process gives its median over the repetitions, for every
implementation measured beside oneDNN. At the end, per problem,
implementation and build: the median over the processes of those medians,
their range, the median GB/s of the implementation and of oneDNN in the
same loop, and how many processes reached the goal (goal_vs_onednn, which
bench_kernels writes into the JSON). --keep DIR keeps each process's JSON
there (DIR/<round>-<build>.json).

Exit status: 0 done; 1 a run failed; 2 bad usage, an unreadable report,
or nothing measured beside oneDNN (an empty selection).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the sources

import bench_json


class UsageError(Exception):
    """Arguments this script cannot run with."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse(argv):
    if "--" not in argv:
        raise UsageError("give bench_kernels' arguments after --")
    split = argv.index("--")
    parser = Parser(prog="across_processes.py", add_help=False)
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--keep")
    parser.add_argument("bench", nargs="+")
    ours = parser.parse_args(argv[:split])
    if ours.processes < 1:
        raise UsageError("--processes must be at least 1")
    return ours, argv[split + 1 :]


def process_medians(runs):
    """{(problem, impl): (median ratio, median GB/s, median oneDNN GB/s in the
    loop)} over one process's repetitions, for implementations measured
    beside oneDNN."""
    out = {}
    for key, rs in runs.items():
        beside = [r for r in rs if r.get("vs_onednn", 0) > 0 and "onednn_GB/s" in r]
        if not beside:
            continue
        out[key] = (
            statistics.median(r["vs_onednn"] for r in beside),
            statistics.median(r["GB/s"] for r in beside),
            statistics.median(r["onednn_GB/s"] for r in beside),
        )
    return out


def pool(per_process, goal):
    """From [process_medians, ...] of one build: {(problem, impl): summary},
    summary = (processes, median ratio, lowest, highest, median GB/s, median
    oneDNN GB/s, processes at or above the goal). A median of medians: each
    process counts once, however many repetitions it ran."""
    by_key = {}
    for medians in per_process:
        for key, m in medians.items():
            by_key.setdefault(key, []).append(m)
    out = {}
    for key, ms in by_key.items():
        ratios = [m[0] for m in ms]
        out[key] = (
            len(ms),
            statistics.median(ratios),
            min(ratios),
            max(ratios),
            statistics.median(m[1] for m in ms),
            statistics.median(m[2] for m in ms),
            sum(1 for r in ratios if r >= goal),
        )
    return out


def run_once(bench, args, json_path):
    if os.path.exists(json_path):
        os.remove(json_path)  # a kept report of an earlier run is not this one's
    cmd = [bench, *args, "--benchmark_out=" + json_path, "--benchmark_out_format=json"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        print(f"across_processes: {' '.join(cmd)} exited with {done.returncode}")
        return False
    return True


def label(key):
    problem, impl = key
    return f"{bench_json.problem_name(problem)}/{impl}"


def print_pooled(benches, pooled, goal):
    print(f"\nacross_processes: per build, the median over processes of each process's median "
          f"ratio to oneDNN (> 1: faster), its range, median GB/s, and processes >= {goal:g}")
    keys = sorted({k for p in pooled for k in p})
    width = max(len(label(k)) for k in keys)
    print(f"{'problem/impl':<{width}} build procs  x/oneDNN  (range)        GB/s  oneDNN GB/s  "
          f">= goal")
    for key in keys:
        for b, p in enumerate(pooled):
            if key not in p:
                continue
            n, med, lo, hi, gbps, onednn, met = p[key]
            print(f"{label(key):<{width}} {b + 1:>5} {n:>5}  {med:8.2f}  ({lo:.2f}-{hi:.2f})  "
                  f"{gbps:8.2f}  {onednn:11.2f}  {met}/{n}")
    if len(benches) > 1:
        for b, bench in enumerate(benches):
            print(f"build {b + 1}: {bench}")


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    try:
        ours, args = parse(argv)
    except UsageError as e:
        print(f"across_processes: {e} (--help for usage)")
        return 2
    per_build = [[] for _ in ours.bench]
    goal = None
    with tempfile.TemporaryDirectory() as tmp:
        where = ours.keep or tmp
        os.makedirs(where, exist_ok=True)
        for rnd in range(1, ours.processes + 1):
            for b, bench in enumerate(ours.bench):
                json_path = os.path.join(where, f"{rnd}-{b + 1}.json")
                if not run_once(bench, args, json_path):
                    return 1
                if not os.path.exists(json_path) or os.path.getsize(json_path) == 0:
                    print(f"across_processes: {bench} wrote no report: no benchmark matched "
                          f"the filter")
                    return 2
                try:
                    goal, runs = bench_json.load(json_path)
                except bench_json.BadReport as e:
                    print(f"across_processes: {e}")
                    return 2
                medians = process_medians(runs)
                per_build[b].append(medians)
                cells = "; ".join(f"{label(k)} {m[0]:.2f} ({m[1]:.1f} GB/s)"
                                  for k, m in sorted(medians.items()))
                cells = cells or "nothing measured"
                print(f"process {rnd}/{ours.processes} build {b + 1}: {cells}", flush=True)
    pooled = [pool(p, goal) for p in per_build]
    if not any(pooled):
        print("across_processes: no implementation was measured beside oneDNN (check the "
              "filter, and that oneDNN was found)")
        return 2
    print_pooled(ours.bench, pooled, goal)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
