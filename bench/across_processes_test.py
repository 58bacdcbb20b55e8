#!/usr/bin/env python3
"""Tests of across_processes.py and bench_json.py.

  across_processes_test.py BENCH_KERNELS

The pooling is checked on made-up processes whose median of medians differs
from every other way of pooling them (the median or the mean of all
repetitions, the mean of the medians), so a pooling that took any of those
would fail. The run is checked against bench_kernels itself: two processes
of a small problem, each process's printed ratio against the median of the
repetitions in the report it kept.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ beside the sources

import across_processes
import bench_json

BENCH = None  # bench_kernels, from the command line

PROBLEM = (1024, "fwd", "bf16", 4096, 2)
NAME = "ws:1024MiB/fwd/bf16/d:4096/threads:2"


def report(repetitions, goal=1.1):
    """A bench_kernels JSON report: (impl, vs_onednn, GB/s, oneDNN GB/s) per repetition."""
    runs = [{"run_name": f"{NAME}/{impl}/manual_time", "run_type": "iteration",
             "vs_onednn": ratio, "GB/s": gbps, "onednn_GB/s": onednn}
            for impl, ratio, gbps, onednn in repetitions]
    # What is not a measured repetition beside oneDNN: an aggregate, oneDNN's
    # own benchmark (no ratio), an error.
    runs.append({"run_name": f"{NAME}/fast/manual_time", "run_type": "aggregate",
                 "aggregate_name": "median", "vs_onednn": 99.0, "GB/s": 1.0,
                 "onednn_GB/s": 1.0})
    runs.append({"run_name": f"{NAME}/onednn/manual_time", "run_type": "iteration",
                 "vs_onednn": 1.0, "GB/s": 30.0})
    runs.append({"run_name": f"{NAME}/fast/manual_time", "run_type": "iteration",
                 "error_occurred": True, "vs_onednn": 99.0, "GB/s": 1.0, "onednn_GB/s": 1.0})
    return {"context": {"goal_vs_onednn": f"{goal:.17g}"}, "benchmarks": runs}


def write(tmp, name, content):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(content, f)
    return path


class Pool(unittest.TestCase):
    # Three processes' ratios: medians 1.0, 2.0 and 6.0. The median of the
    # medians is 2.0; of all nine repetitions 1.0; the mean of the medians
    # 3.0; of all nine about 2.18.
    PROCESSES = [[1.0, 1.0, 1.0], [2.0, 2.0, 0.1], [0.5, 6.0, 6.0]]

    def pooled(self):
        with tempfile.TemporaryDirectory() as tmp:
            per_process = []
            for p, ratios in enumerate(self.PROCESSES):
                reps = [("fast", r, 10.0 * (p + 1) + i, 20.0 + p) for i, r in enumerate(ratios)]
                goal, runs = bench_json.load(write(tmp, f"{p}.json", report(reps)))
                per_process.append(across_processes.process_medians(runs))
        return goal, across_processes.pool(per_process, goal)

    def test_takes_the_median_of_each_process_median(self):
        goal, pooled = self.pooled()
        self.assertEqual(goal, 1.1)
        self.assertEqual(list(pooled), [(PROBLEM, "fast")])
        n, med, lo, hi, gbps, onednn, met = pooled[(PROBLEM, "fast")]
        self.assertEqual((n, med, lo, hi, met), (3, 2.0, 1.0, 6.0, 2))
        # GB/s: process medians 11, 21, 31; oneDNN's 20, 21, 22.
        self.assertEqual((gbps, onednn), (21.0, 21.0))

    def test_the_other_poolings_would_differ(self):
        every = [r for p in self.PROCESSES for r in p]
        medians = [statistics.median(p) for p in self.PROCESSES]
        _, pooled = self.pooled()
        med = pooled[(PROBLEM, "fast")][1]
        for other in (statistics.median(every), statistics.mean(every),
                      statistics.mean(medians)):
            self.assertNotAlmostEqual(med, other)


class Load(unittest.TestCase):
    def test_reads_names_with_and_without_a_working_set(self):
        with tempfile.TemporaryDirectory() as tmp:
            content = report([("fast", 1.2, 10.0, 12.0)])
            content["benchmarks"].append({"run_name": "bwd/f32/d:768/threads:1/memcpy/manual_time",
                                          "run_type": "iteration", "vs_onednn": 1.5, "GB/s": 3.0,
                                          "onednn_GB/s": 2.0})
            _, runs = bench_json.load(write(tmp, "r.json", content))
        self.assertIn((PROBLEM, "fast"), runs)
        self.assertIn(((0, "bwd", "f32", 768, 1), "memcpy"), runs)
        self.assertEqual(bench_json.problem_name(PROBLEM), NAME)
        self.assertEqual(bench_json.problem_name((0, "bwd", "f32", 768, 1)),
                         "bwd/f32/d:768/threads:1")

    def test_rejects_what_bench_kernels_does_not_write(self):
        with tempfile.TemporaryDirectory() as tmp:
            no_goal = report([("fast", 1.2, 10.0, 12.0)])
            del no_goal["context"]["goal_vs_onednn"]
            odd_name = report([("fast", 1.2, 10.0, 12.0)])
            odd_name["benchmarks"][0]["run_name"] = "fwd/bf16/n:4/fast/manual_time"
            for name, content in (("no_goal.json", no_goal), ("odd_name.json", odd_name)):
                with self.assertRaises(bench_json.BadReport, msg=name):
                    bench_json.load(write(tmp, name, content))
            with open(os.path.join(tmp, "empty.json"), "w", encoding="utf-8"):
                pass
            with self.assertRaises(bench_json.BadReport):
                bench_json.load(os.path.join(tmp, "empty.json"))


class Run(unittest.TestCase):
    def run_script(self, *args):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "across_processes.py")
        return subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                              check=False)

    def test_each_process_line_is_the_median_of_its_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            done = self.run_script("--processes", "2", "--keep", tmp, BENCH, "--",
                                   "--elements=4096", "--benchmark_filter=/d:64/threads:1/fast/",
                                   "--benchmark_repetitions=3", "--benchmark_min_time=0.01")
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            lines = [l for l in done.stdout.splitlines() if l.startswith("process ")]
            self.assertEqual(len(lines), 2, done.stdout)
            checked = {"f32": 0, "bf16": 0}
            for rnd, line in enumerate(lines, start=1):
                _, runs = bench_json.load(os.path.join(tmp, f"{rnd}-1.json"))
                for (problem, impl), rs in runs.items():
                    if impl != "fast":
                        continue
                    self.assertEqual(len(rs), 3)
                    name = f"{bench_json.problem_name(problem)}/fast "
                    if not any("vs_onednn" in r for r in rs):
                        # oneDNN has no such primitive on this CPU (bf16
                        # without AVX-512): no ratio, so not on the line.
                        self.assertNotIn(name, line)
                        continue
                    med = statistics.median(r["vs_onednn"] for r in rs)
                    self.assertIn(f"{name}{med:.2f} ", line)
                    checked[problem[2]] += 1
            # fwd and bwd in two processes: fp32 always; bf16 where oneDNN
            # has it (with AVX-512), in both processes or in neither.
            self.assertEqual(checked["f32"], 4)
            self.assertIn(checked["bf16"], (0, 4))
            self.assertRegex(done.stdout, re.compile(r"^fwd/f32/d:64/threads:1/fast +1 +2 ", re.M))

    def test_an_empty_selection_fails(self):
        done = self.run_script("--processes", "1", BENCH, "--", "--benchmark_filter=^nothing$")
        self.assertEqual(done.returncode, 2, done.stdout)
        self.assertIn("no benchmark matched", done.stdout)

    def test_bad_arguments_fail(self):
        for args in ([BENCH], ["--processes", "0", BENCH, "--", "x"]):
            done = self.run_script(*args)
            self.assertEqual(done.returncode, 2, f"{args}: {done.stdout}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    BENCH = sys.argv.pop(1)
    unittest.main()
