"""Reads what bench_kernels writes with --benchmark_out (JSON): the goal it
states in the context (goal_vs_onednn) and the repetitions it reported,
by problem and implementation. Shared by check_summary.py and
across_processes.py.
"""

import json
import re

# A reported run's name without "/manual_time": an optional working set
# (--lnv_sweep), then the problem and the implementation.
NAME = re.compile(r"^(?:ws:(\d+)MiB/)?(fwd|bwd)/(f32|bf16)/d:(\d+)/threads:(\d+)/([a-z_]+)$")


class BadReport(Exception):
    """The JSON is not what bench_kernels writes."""


def problem_name(problem):
    """The benchmark name's problem part, as bench_kernels prints it."""
    ws_mib, direction, dtype, d, threads = problem
    ws = f"ws:{ws_mib}MiB/" if ws_mib else ""
    return f"{ws}{direction}/{dtype}/d:{d}/threads:{threads}"


def load(json_path):
    """The goal and {(problem, impl): [reported run, ...]}, the runs in the
    order reported; problem = (working set in MiB or 0, direction, dtype, d,
    threads). Only repetitions (run_type "iteration") without an error."""
    try:
        with open(json_path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        raise BadReport(f"{json_path}: {e}") from e
    context = report.get("context", {})
    if "goal_vs_onednn" not in context:
        raise BadReport(f"{json_path}: no goal_vs_onednn in the context")
    goal = float(context["goal_vs_onednn"])
    runs = {}
    for r in report.get("benchmarks", []):
        if r.get("run_type") != "iteration" or r.get("error_occurred"):
            continue
        m = NAME.match(r["run_name"].removesuffix("/manual_time"))
        if not m:
            raise BadReport(f"{json_path}: unexpected benchmark name {r['run_name']}")
        problem = (int(m.group(1) or 0), m.group(2), m.group(3), int(m.group(4)), int(m.group(5)))
        runs.setdefault((problem, m.group(6)), []).append(r)
    return goal, runs
