"""google/benchmark's own compare.py reads what `nkbench run --benchmark-json` writes.

Two real runs of a tiny suite, then `compare.py benchmarks A.json B.json` (Debian's
libbenchmark-tools). compare.py imports scipy, so this runs with /usr/bin/python3,
where python3-scipy installs. Exits 77, which ctest reports as skipped, only when
compare.py itself is missing.

Usage: /usr/bin/python3 test_gbench_compare.py NKBENCH
"""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

COMPARE_PY = Path("/usr/share/benchmark/compare.py")
SKIPPED = 77
SUITE = Path(__file__).resolve().parents[2] / "suites" / "smoke.yaml"
BACKENDS = ("eigen", "libxsmm")
REPS = 3  # compare.py runs its U test from two repetitions on
AGGREGATES = ("mean", "median", "stddev", "cv")
NKBENCH = None  # set from argv


def run_nkbench(gbench_json):
    """The Google Benchmark JSON of one run, and the rows of its nkbench JSON report."""
    report = gbench_json.with_suffix(".nkbench.json")
    subprocess.run([NKBENCH, "run", "--suite", str(SUITE), "--backends", ",".join(BACKENDS),
                    "--reps", str(REPS), "--min-time", "0.01", "--quiet", "--benchmark-json", str(gbench_json),
                    "--json", str(report)], check=True, stdout=subprocess.DEVNULL)
    return json.loads(gbench_json.read_text()), json.loads(report.read_text())["rows"]


class CompareReadsNkbenchJson(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls.tmp.name)
        cls.old, cls.new = tmp / "old.json", tmp / "new.json"
        (cls.old_report, cls.rows), (cls.new_report, _) = run_nkbench(cls.old), run_nkbench(cls.new)
        cls.dump = tmp / "diff.json"
        cls.compare = subprocess.run(
            [sys.executable, str(COMPARE_PY), "--no-color", "--dump_to_json", str(cls.dump),
             "benchmarks", str(cls.old), str(cls.new)], capture_output=True, text=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def families(self):
        return sorted({b["run_name"] for b in self.old_report["benchmarks"]})

    def diff(self):
        return {entry["name"]: entry for entry in json.loads(self.dump.read_text())}

    def test_compare_succeeds(self):
        self.assertEqual(self.compare.returncode, 0, self.compare.stderr)
        self.assertIn(f"Comparing {self.old} to {self.new}", self.compare.stdout)

    def test_every_row_is_a_benchmark(self):
        self.assertEqual(len(self.rows), 6)  # 3 cases x 2 backends
        self.assertTrue(all(row["status"] == "passed" for row in self.rows), self.rows)
        self.assertEqual(self.families(), sorted(f"{row['case']}/{row['backend']}" for row in self.rows))

    def test_output_names_each_benchmark_and_its_aggregates(self):
        lines = self.compare.stdout.splitlines()
        for family in self.families():
            for name in [family] + [f"{family}_{a}" for a in AGGREGATES] + [f"{family}_pvalue"]:
                self.assertTrue(any(line.split()[:1] == [name] for line in lines), f"{name}:\n{self.compare.stdout}")
        self.assertTrue(any(line.startswith("OVERALL_GEOMEAN") for line in lines), self.compare.stdout)

    def test_each_repetition_is_compared_with_its_counterpart(self):
        diff = self.diff()
        for family in self.families():
            def times(report):
                return [b["real_time"] for b in report["benchmarks"]
                        if b["run_name"] == family and b["run_type"] == "iteration"]
            old, new = times(self.old_report), times(self.new_report)
            self.assertEqual(len(old), REPS)
            measurements = diff[family]["measurements"]
            self.assertEqual([m["real_time"] for m in measurements], old)
            self.assertEqual([m["real_time_other"] for m in measurements], new)
            for m, o, n in zip(measurements, old, new):
                self.assertAlmostEqual(m["time"], (n - o) / o)

    def test_u_test_runs_on_the_repetitions(self):
        diff = self.diff()
        for family in self.families():
            utest = diff[family]["utest"]
            self.assertEqual((utest["nr_of_repetitions"], utest["nr_of_repetitions_other"]), (REPS, REPS))
            self.assertTrue(0.0 <= utest["time_pvalue"] <= 1.0, utest)

    def test_aggregates_are_compared_as_aggregates(self):
        diff = self.diff()
        for family in self.families():
            for aggregate in AGGREGATES:
                entry = diff[f"{family}_{aggregate}"]
                self.assertEqual((entry["run_type"], entry["aggregate_name"]), ("aggregate", aggregate))
                self.assertEqual(len(entry["measurements"]), 1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if not COMPARE_PY.is_file():
        print(f"skipped: {COMPARE_PY} not found (apt-get install libbenchmark-tools; scripts/setup.sh does)")
        sys.exit(SKIPPED)
    NKBENCH = sys.argv.pop(1)
    unittest.main()
