#!/usr/bin/env python3
"""Checks bench_kernels' closing table against the runs it reports.

Runs bench_kernels on small problems with three repetitions, writing every
reported run to a JSON file (--benchmark_out) beside the console output, and
checks that each cell of the table is the median, over the reported
repetitions, of that implementation's GB/s or ratio to oneDNN, as printed
(two decimals), and that a row is marked `*` exactly when both copies'
median ratios to oneDNN are below the goal, which bench_kernels writes into
the JSON's context (goal_vs_onednn). The table once took in the runs Google Benchmark makes to
size a benchmark's first repetition, which it does not report
(bench/README.md); this is the check that would have caught it.

  check_summary.py BENCH_KERNELS [--negative-control]

--negative-control changes one printed cell by 0.01 and flips one row's
mark before checking, and exits 0 only if the check then reports exactly
those two: the check can fail. Exit status: 0 pass, 1 a mismatch (or, with the control, a miss),
2 the run or its output could not be read.
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the sources

import bench_json

FILTER = "/d:64/threads:1/"
# The table's columns, in order, after "dir dtype d thr |".
GBPS_COLUMNS = ["fast", "fast_hwy", "onednn", "torch", "memcpy", "memcpy_nt"]
RATIO_COLUMNS = ["fast", "fast_hwy", "torch", "memcpy", "memcpy_nt"]
ROW = re.compile(r"^(fwd|bwd)\s+(f32|bf16)\s+(\d+)\s+(\d+)\s+\|(.*)\|(.*?)( \*)?$")


def run(bench, json_path):
    args = [
        bench,
        "--elements=4096",
        "--benchmark_filter=" + FILTER,
        "--benchmark_repetitions=3",
        "--benchmark_min_time=0.01",
        "--benchmark_out=" + json_path,
        "--benchmark_out_format=json",
    ]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"check_summary: {bench} exited with {done.returncode}")
    return done.stdout


def reported_medians(json_path):
    """The goal (goal_vs_onednn) and (problem, impl) -> (median GB/s, median ratio or None,
    repetitions); problem = (dir, dtype, d, threads)."""
    try:
        goal, runs = bench_json.load(json_path)
    except bench_json.BadReport as e:
        raise SystemExit(f"check_summary: {e}") from e
    medians = {}
    for (problem, impl), rs in runs.items():
        ratios = [r["vs_onednn"] for r in rs if r.get("vs_onednn", 0) > 0]
        medians[(problem[1:], impl)] = (
            statistics.median(r["GB/s"] for r in rs),
            statistics.median(ratios) if ratios else None,
            len(rs),
        )
    return goal, medians


def table_cells(stdout):
    """(problem, impl, 'GB/s' or 'ratio') -> printed text, and (problem, 'mark') -> '*' or
    '', for every row of the table."""
    cells = {}
    for line in stdout.splitlines():
        m = ROW.match(line.rstrip())
        if not m:
            continue
        key = (m.group(1), m.group(2), int(m.group(3)), int(m.group(4)))
        cells[(key, "mark", "")] = "*" if m.group(7) else ""
        gbps, ratios = m.group(5).split(), m.group(6).split()
        if len(gbps) != len(GBPS_COLUMNS) or len(ratios) != len(RATIO_COLUMNS):
            raise SystemExit(f"check_summary: a table row with unexpected columns: {line}")
        for impl, text in zip(GBPS_COLUMNS, gbps):
            cells[(key, impl, "GB/s")] = text
        for impl, text in zip(RATIO_COLUMNS, ratios):
            cells[(key, impl, "ratio")] = text
    return cells


def mismatches(goal, medians, cells):
    """The cells that are not the printed median of the reported repetitions."""
    bad = []
    for (key, impl, what), text in sorted(cells.items()):
        if impl == "mark":
            copies = [medians.get((key, c), (0, None, 0))[1] for c in ("memcpy", "memcpy_nt")]
            short = all(c is not None and c < goal for c in copies)
            if text != ("*" if short else ""):
                bad.append(f"{key} mark: table '{text}', copies' ratios {copies}")
            continue
        entry = medians.get((key, impl))
        value = None
        if entry is not None:
            value = entry[0] if what == "GB/s" else entry[1]
        expected = "-" if value is None or value <= 0 else f"{value:.2f}"
        if text != expected:
            bad.append(f"{key} {impl} {what}: table {text}, median of the repetitions {expected}")
    return bad


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    bench = sys.argv[1]
    control = "--negative-control" in sys.argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        json_path = os.path.join(tmp, "runs.json")
        stdout = run(bench, json_path)
        goal, medians = reported_medians(json_path)
    cells = table_cells(stdout)
    measured = [c for c, t in cells.items() if t != "-" and c[1] != "mark"]
    if not medians or not measured:
        print("check_summary: no table rows or no reported runs: nothing was checked")
        return 2
    short = [k for k, (_, _, n) in medians.items() if n != 3]
    if short:
        print(f"check_summary: not three repetitions for {short}")
        return 1
    if control:
        victim = min(c for c in measured if c[1] == "fast" and c[2] == "GB/s")
        cells[victim] = f"{float(cells[victim]) + 0.01:.2f}"
        mark = (victim[0], "mark", "")
        cells[mark] = "" if cells[mark] else "*"
    bad = mismatches(goal, medians, cells)
    if control:
        expected = sorted([f"{victim[0]} fast GB/s", f"{victim[0]} mark"])
        hit = sorted(b.split(":")[0] for b in bad) == expected
        print(f"check_summary (negative control): changed {victim}; reported {bad}")
        return 0 if hit else 1
    for b in bad:
        print("check_summary: " + b)
    rows = sum(1 for c in cells if c[1] == "mark")
    print(f"check_summary: {len(measured)} cells and {rows} marks checked, {len(bad)} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
