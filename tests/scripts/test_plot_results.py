"""scripts/plot_results.py end to end: small synthetic reports in, figures and ratios.md out.

Run with the Python that has matplotlib: /usr/bin/python3 -m unittest tests/scripts/test_plot_results.py
"""

import csv
import json
import math
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "plot_results.py"
BAD_INPUT = 2

# mlir's ratios to libxsmm in the f32 run; their geometric mean is what the figure and table must show.
MLIR_RATIOS = {"c1": 1.2, "c2": 0.9, "c3": 1.5}
EXPECTED_MLIR_GEOMEAN = math.prod(MLIR_RATIOS.values()) ** (1 / len(MLIR_RATIOS))


def row(case, backend, status="passed", gflops=None, ratio=None, dtype="f32", isa="avx512", **extra):
    fields = {"suite": "t", "case": case, "kind": "brgemm", "dtype": dtype, "m": 8, "n": 8, "k": 8,
              "batch": 2, "beta": 0, "isa": isa, "backend": backend, "threads": 1,
              "median_gflops": gflops, "ratio_to_libxsmm": ratio, "compile_ms": 1.5,
              "status": status, "note": ""}
    fields.update(extra)
    return fields


def f32_rows():
    rows = []
    for case, mlir_ratio in MLIR_RATIOS.items():
        rows += [row(case, "libxsmm", gflops=50.0, ratio=1.0),
                 row(case, "mlir", gflops=50.0 * mlir_ratio, ratio=mlir_ratio)]
        untimed = case == "c2"
        # c2: eigen failed and mlir-default was skipped. The failed row still carries a speed, as a
        # broken report might: it must not be drawn.
        rows.append(row(case, "eigen", status="failed" if untimed else "passed", gflops=20.0, ratio=0.4))
        rows.append(row(case, "mlir-default", status="skipped") if untimed
                    else row(case, "mlir-default", gflops=2.0, ratio=0.04))
    # bf16 operands with a bf16 C: a group of its own.
    rows += [row("bc1", "libxsmm", dtype="bf16", c_dtype="bf16", status="skipped"),
             row("bc1", "eigen", dtype="bf16", c_dtype="bf16", gflops=30.0)]
    return rows


def f32_report():
    metadata = {"cpu_model": "Test CPU 9000", "isa": "avx512", "threads": 1, "date": "2026-01-02T03:04:05Z",
                "peak_gflops": 100.0, "bf16_peak_gflops": 0.0, "hostname": "h", "git_commit": "abc"}
    return {"nkbench_version": "0.1", "metadata": metadata,
            "rows": [dict(r, c_dtype=r.get("c_dtype", "f32")) for r in f32_rows()]}


def bf16_csv_rows():
    """An older CSV: no c_dtype column, so C is f32; no metadata, so CPU, date and peak are unknown."""
    rows = []
    for case, onednn_status in (("b1", "skipped"), ("b2", "error")):
        rows += [row(case, "libxsmm", dtype="bf16", isa="avx2", gflops=80.0, ratio=1.0),
                 row(case, "mlir", dtype="bf16", isa="avx2", gflops=84.0, ratio=1.05),
                 row(case, "onednn", dtype="bf16", isa="avx2", status=onednn_status)]
    return rows


def write_csv(path, rows):
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        for record in rows:
            writer.writerow({k: "" if v is None else v for k, v in record.items()})


def run_script(*arguments):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, arguments)],
                          capture_output=True, text=True, timeout=120)


def svg_ids(path):
    return [element.get("id") for element in ElementTree.parse(path).iter() if element.get("id")]


def svg_text(path):
    return " ".join(text for element in ElementTree.parse(path).iter() for text in [element.text] if text)


AMX_METADATA = {"cpu_model": "Tile CPU", "isa": "amx", "threads": 1, "date": "2026-01-02T03:04:05Z",
                "peak_gflops": 200.0, "bf16_peak_gflops": 6000.0, "bf16_peak_instruction": "tdpbf16ps"}


def plot_amx_report(rows, *figures):
    """Plots one --isa amx report of `rows`; returns the script's result and the text of the named SVG figures."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "amx.json"
        report.write_text(json.dumps({"nkbench_version": "0.1", "metadata": AMX_METADATA, "rows": rows}))
        result = run_script(report, "--out", Path(folder) / "plots")
        texts = [svg_text(Path(folder) / "plots" / figure) for figure in figures] if result.returncode == 0 else []
        return result, texts


class RenderedFigures(unittest.TestCase):
    """One render of two inputs (JSON with metadata + CSV without), shared by the checks below."""

    @classmethod
    def setUpClass(cls):
        cls.temporary = tempfile.TemporaryDirectory()
        folder = Path(cls.temporary.name)
        json_path, csv_path = folder / "run-f32.json", folder / "run-bf16.csv"
        json_path.write_text(json.dumps(f32_report()))
        write_csv(csv_path, bf16_csv_rows())
        cls.out = folder / "plots"
        cls.result = run_script(json_path, csv_path, "--out", cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.temporary.cleanup()

    def test_succeeds_and_explains_the_missing_ablation(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertIn("ablation-bf16-avx2: not drawn", self.result.stderr)

    def test_writes_png_and_svg_of_every_figure(self):
        stems = [f"{figure}-{group}" for group in ("f32-avx512", "bf16-avx2", "bf16-cbf16-avx512")
                 for figure in ("gflops", "compile")]
        stems += ["ratio-f32-avx512", "ratio-bf16-avx2", "ablation-f32-avx512"]
        for stem in stems:
            png, svg = self.out / f"{stem}.png", self.out / f"{stem}.svg"
            self.assertTrue(png.read_bytes().startswith(b"\x89PNG"), png)
            self.assertGreater(png.stat().st_size, 1000, png)
            self.assertTrue(svg_ids(svg), svg)
        # No libxsmm timing in the bf16-C group: nothing to divide by, so no ratio figure.
        self.assertFalse((self.out / "ratio-bf16-cbf16-avx512.png").exists())

    def test_one_gflops_bar_per_timed_row(self):
        bars = [i.split(":") for i in svg_ids(self.out / "gflops-f32-avx512.svg") if i.startswith("gflops:")]
        per_backend = {backend: sum(1 for _, b, _ in bars if b == backend)
                       for backend in ("mlir", "mlir-default", "libxsmm", "eigen")}
        self.assertEqual(per_backend, {"mlir": 3, "mlir-default": 2, "libxsmm": 3, "eigen": 2})
        self.assertEqual(len(bars), 10)

    def test_untimed_rows_get_a_mark_and_no_bar(self):
        for figure in ("gflops", "ratio"):
            ids = svg_ids(self.out / f"{figure}-f32-avx512.svg")
            for backend in ("eigen", "mlir-default"):
                self.assertNotIn(f"{figure}:{backend}:c2", ids)
                self.assertIn(f"{figure}-unmeasured:{backend}:c2", ids)
        csv_ids = svg_ids(self.out / "gflops-bf16-avx2.svg")
        self.assertFalse([i for i in csv_ids if i.startswith("gflops:onednn:")])
        self.assertEqual(len([i for i in csv_ids if i.startswith("gflops-unmeasured:onednn:")]), 2)

    def test_peak_line_from_metadata_and_unknown_without(self):
        self.assertIn("peak", svg_ids(self.out / "gflops-f32-avx512.svg"))
        self.assertIn("measured fp32 FMA peak", svg_text(self.out / "gflops-f32-avx512.svg"))
        self.assertNotIn("peak", svg_ids(self.out / "gflops-bf16-avx2.svg"))
        self.assertIn("measured peak: unknown", svg_text(self.out / "gflops-bf16-avx2.svg"))

    def test_caption_says_where_and_when_or_unknown(self):
        caption = svg_text(self.out / "gflops-f32-avx512.svg")
        for fact in ("Test CPU 9000", "ISA: avx512", "threads: 1", "2026-01-02 03:04 UTC"):
            self.assertIn(fact, caption)
        self.assertIn("CPU: unknown · ISA: avx2 · threads: 1 · run: unknown",
                      svg_text(self.out / "gflops-bf16-avx2.svg"))
        self.assertIn("bf16->bf16 C", svg_text(self.out / "gflops-bf16-cbf16-avx512.svg"))

    def test_geometric_mean_in_figure_and_table(self):
        self.assertIn(f"mlir: geomean {EXPECTED_MLIR_GEOMEAN:.3f} (3 cases)",
                      svg_text(self.out / "ratio-f32-avx512.svg"))
        self.assertIn("ratio-geomean:mlir", svg_ids(self.out / "ratio-f32-avx512.svg"))
        table = (self.out / "ratios.md").read_text()
        geomean_row = next(line for line in table.splitlines()
                           if line.startswith("| **geomean**") and f"{EXPECTED_MLIR_GEOMEAN:.3f}" in line)
        # eigen: c1 and c3 only (c2 failed), both 0.4.
        self.assertIn("**0.400** (2 of 3 cases)", geomean_row)
        self.assertRegex(table, r"\| `c2` \| 0\.900 \| skipped \| failed \|")

    def test_backend_colours_agree_across_figures(self):
        def mlir_bar_colour(figure):
            svg = (self.out / f"{figure}-f32-avx512.svg").read_text()
            group = re.search(rf'<g id="{figure}:mlir:c1">(.*?)</g>', svg, re.S).group(1)
            return re.search(r"fill: (#[0-9a-f]{6})", group).group(1)
        self.assertEqual(mlir_bar_colour("gflops"), mlir_bar_colour("ratio"))
        self.assertEqual(mlir_bar_colour("gflops"), mlir_bar_colour("ablation"))


class AmxPeak(unittest.TestCase):
    """Under --isa amx, bf16 rows are drawn against the measured AMX tile peak."""

    def test_bf16_rows_under_amx_show_the_tile_peak(self):
        rows = [dict(row(case, backend, dtype="bf16", isa="amx", gflops=gflops), c_dtype="f32")
                for case in ("a1", "a2") for backend, gflops in (("mlir", 5000.0), ("onednn", 4800.0))]
        result, (text,) = plot_amx_report(rows, "gflops-bf16-amx.svg")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("bf16 AMX tile peak", text)
        self.assertNotIn("dot-product", text)


class Bf16WithoutItsPeak(unittest.TestCase):
    """At avx512-bf16, bf16 runs on vdpbf16ps: a report without that peak has no peak line, never the fp32 one."""

    def test_the_fp32_peak_is_not_drawn_for_bf16_dot_products(self):
        metadata = {"cpu_model": "Test CPU", "isa": "avx512-bf16", "threads": 1, "date": "2026-01-02T03:04:05Z",
                    "peak_gflops": 150.0, "bf16_peak_gflops": 0.0, "hostname": "h", "git_commit": "abc"}
        rows = [dict(row(case, "mlir", dtype="bf16", isa="avx512-bf16", gflops=250.0), c_dtype="f32")
                for case in ("b1", "b2")]
        with tempfile.TemporaryDirectory() as folder:
            report = Path(folder) / "bf16.json"
            report.write_text(json.dumps({"nkbench_version": "0.1", "metadata": metadata, "rows": rows}))
            result = run_script(report, "--out", Path(folder) / "plots")
            self.assertEqual(result.returncode, 0, result.stderr)
            text = svg_text(Path(folder) / "plots" / "gflops-bf16-avx512-bf16.svg")
        self.assertNotIn("fp32 FMA peak", text)
        self.assertIn("measured peak: unknown", text)


class BelowTheCap(unittest.TestCase):
    """A backend that ran a lower level than the run's cap is marked with that level; one at the cap is not."""

    def test_libxsmm_under_amx_is_labelled_with_its_level(self):
        rows = []
        for case in ("a1", "a2"):
            rows += [dict(row(case, "libxsmm", dtype="bf16", isa="amx", gflops=1000.0, ratio=1.0,
                              isa_used="avx512-bf16"), c_dtype="f32"),
                     dict(row(case, "mlir", dtype="bf16", isa="amx", gflops=5000.0, ratio=5.0, isa_used="amx"),
                          c_dtype="f32")]
        result, (gflops, ratio) = plot_amx_report(rows, "gflops-bf16-amx.svg", "ratio-bf16-amx.svg")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("libxsmm (avx512-bf16)", gflops)
        self.assertNotIn("mlir (", gflops)
        self.assertIn("libxsmm (avx512-bf16) = 1", ratio)

    def test_reports_without_the_column_are_not_marked(self):
        # f32_report() predates isa_used: its rows plot as before, with plain backend names.
        self.assertNotIn("isa_used", f32_report()["rows"][0])
        with tempfile.TemporaryDirectory() as folder:
            report = Path(folder) / "old.json"
            report.write_text(json.dumps(f32_report()))
            result = run_script(report, "--out", Path(folder) / "plots")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("libxsmm = 1", svg_text(Path(folder) / "plots" / "ratio-f32-avx512.svg"))


class ThreadCounts(unittest.TestCase):
    """A run at --threads 1,2: one set of figures per count, each against the peak of the cores it
    used, and a scaling figure of each backend's speed-up over one thread."""

    @classmethod
    def setUpClass(cls):
        cls.temporary = tempfile.TemporaryDirectory()
        folder = Path(cls.temporary.name)
        rows = []
        for threads, scale in ((1, 1.0), (2, 1.9)):
            rows += [row("g1", "mlir", gflops=200.0 * scale, threads=threads),
                     row("g1", "libxsmm", gflops=210.0 * scale, threads=threads)]
        # A BRGEMM that runs on one thread only: skipped on two.
        rows += [row("b1", "mlir", gflops=220.0, threads=1), row("b1", "mlir", status="skipped", threads=2)]
        metadata = {"cpu_model": "Two Core CPU", "isa": "avx512", "threads": 1, "thread_counts": [1, 2],
                    "peak_gflops": 230.0, "peaks_by_threads": {"2": {"fp32": 455.0, "bf16": 900.0}}}
        report = folder / "threads.json"
        report.write_text(json.dumps({"nkbench_version": "0.1", "metadata": metadata,
                                      "rows": [dict(r, c_dtype="f32") for r in rows]}))
        cls.out = folder / "plots"
        cls.result = run_script(report, "--out", cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.temporary.cleanup()

    def test_each_count_is_a_group_against_its_own_peak(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        one, two = svg_text(self.out / "gflops-f32-avx512.svg"), svg_text(self.out / "gflops-f32-avx512-2t.svg")
        self.assertIn("230.0 GFLOPS", one)
        self.assertIn("fp32 FMA peak (2 cores)", two)
        self.assertIn("455.0 GFLOPS", two)
        self.assertIn("2 threads", two)
        self.assertIn("## f32, avx512, 2 threads", (self.out / "ratios.md").read_text())

    def test_scaling_shows_speedups_against_the_ideal(self):
        ids = svg_ids(self.out / "scaling-f32-avx512.svg")
        self.assertIn("scaling-2t:mlir:g1", ids)
        self.assertIn("scaling-2t:libxsmm:g1", ids)
        self.assertIn("ideal-2t", ids)
        self.assertIn("scaling-2t-unmeasured:mlir:b1", ids)
        # GFLOPS against threads: mlir's line over g1 alone (b1 was not timed at 2 threads), and the peaks.
        self.assertIn("scaling-gflops:mlir", ids)
        self.assertIn("peak", ids)
        self.assertNotIn("scaling-2t:mlir:b1", ids)
        text = svg_text(self.out / "scaling-f32-avx512.svg")
        self.assertIn("mlir: geomean 1.90×", text)
        self.assertIn("ideal: 2×", text)
        self.assertIn("mlir (1 of 2 cases)", text)
        self.assertIn("threads: 1 / 2", text)

    def test_one_count_draws_no_scaling(self):
        self.assertFalse(list(self.out.glob("scaling-*-2t.*")))
        with tempfile.TemporaryDirectory() as folder:
            report = Path(folder) / "one.json"
            report.write_text(json.dumps(f32_report()))
            result = run_script(report, "--out", Path(folder) / "plots")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertFalse(list((Path(folder) / "plots").glob("scaling-*")))


def svg_element(path, element_id):
    return next(element for element in ElementTree.parse(path).iter() if element.get("id") == element_id)


def is_hatched(path, bar_id):
    """A hatched bar is filled with an SVG pattern instead of its backend's colour."""
    bar = next(element for element in svg_element(path, bar_id).iter() if element.tag.endswith("path"))
    return "fill: url(#" in bar.get("style", "")


class NoisyRows(unittest.TestCase):
    """Rows flagged noisy keep their bars and their weight in the geomeans, but are marked: hatched
    bars with a legend note, and '(noisy)' with a footnote in ratios.md. A ratio is marked where
    either its backend's row or libxsmm's is noisy."""

    @classmethod
    def setUpClass(cls):
        cls.temporary = tempfile.TemporaryDirectory()
        folder = Path(cls.temporary.name)
        report = f32_report()
        for record in report["rows"]:
            # mlir's c1 is noisy; libxsmm's c3 is, so every ratio of c3 is less sure.
            if record["status"] == "passed":
                record["noisy"] = (record["case"], record["backend"]) in (("c1", "mlir"), ("c3", "libxsmm"))
        rows = bf16_csv_rows()
        for record in rows:
            record["noisy"] = "1" if (record["case"], record["backend"]) == ("b2", "mlir") else "0"
        json_path, csv_path = folder / "noisy.json", folder / "noisy.csv"
        json_path.write_text(json.dumps(report))
        write_csv(csv_path, rows)
        cls.out = folder / "plots"
        cls.result = run_script(json_path, csv_path, "--out", cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.temporary.cleanup()

    def test_noisy_bars_are_hatched_and_explained(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        gflops = self.out / "gflops-f32-avx512.svg"
        self.assertTrue(is_hatched(gflops, "gflops:mlir:c1"))
        self.assertTrue(is_hatched(gflops, "gflops:libxsmm:c3"))
        self.assertFalse(is_hatched(gflops, "gflops:mlir:c3"))
        self.assertFalse(is_hatched(gflops, "gflops:libxsmm:c1"))
        self.assertIn("hatched (2 bars): row flagged noisy", svg_text(gflops))
        ratio = self.out / "ratio-f32-avx512.svg"
        hatched = {bar for bar in svg_ids(ratio) if bar.startswith("ratio:") and is_hatched(ratio, bar)}
        self.assertEqual(hatched, {"ratio:mlir:c1", "ratio:mlir:c3", "ratio:mlir-default:c3", "ratio:eigen:c3"})
        self.assertIn("flagged noisy", svg_text(ratio))
        self.assertTrue(is_hatched(self.out / "gflops-bf16-avx2.svg", "gflops:mlir:b2"))  # CSV's 1
        self.assertFalse(is_hatched(self.out / "gflops-bf16-avx2.svg", "gflops:mlir:b1"))

    def test_noisy_rows_keep_their_weight_in_the_geomean(self):
        self.assertIn(f"mlir: geomean {EXPECTED_MLIR_GEOMEAN:.3f} (3 cases)",
                      svg_text(self.out / "ratio-f32-avx512.svg"))
        self.assertFalse(is_hatched(self.out / "ratio-f32-avx512.svg", "ratio-geomean:mlir"))

    def test_ratios_table_marks_noisy_cells_with_a_footnote(self):
        table = (self.out / "ratios.md").read_text()
        self.assertRegex(table, r"\| `c1` \| 1\.200 \(noisy\) \| 0\.040 \| 0\.400 \|")
        self.assertRegex(table, r"\| `c2` \| 0\.900 \| skipped \| failed \|")
        self.assertRegex(table, r"\| `c3` \| 1\.500 \(noisy\) \| 0\.040 \(noisy\) \| 0\.400 \(noisy\) \|")
        self.assertIn(f"**{EXPECTED_MLIR_GEOMEAN:.3f}**", table)
        self.assertEqual(table.count("(noisy): this row or libxsmm's was flagged noisy"), 2)  # f32 and CSV tables

    def test_reports_without_the_flag_are_not_marked(self):
        self.assertNotIn("noisy", f32_report()["rows"][0])
        with tempfile.TemporaryDirectory() as folder:
            report = Path(folder) / "old.json"
            report.write_text(json.dumps(f32_report()))
            result = run_script(report, "--out", Path(folder) / "plots")
            self.assertEqual(result.returncode, 0, result.stderr)
            gflops = Path(folder) / "plots" / "gflops-f32-avx512.svg"
            self.assertFalse([bar for bar in svg_ids(gflops) if bar.startswith("gflops:") and is_hatched(gflops, bar)])
            self.assertNotIn("noisy", svg_text(gflops))
            self.assertNotIn("noisy", (Path(folder) / "plots" / "ratios.md").read_text())


class CaseOfItsOwnThreadCount(unittest.TestCase):
    """--threads 1,2 with a case that has its own threads: 2 in the suite: it ran at 2 threads only,
    so it has no speed-up. The scaling figure must not show it as an empty slot: it is left out of
    the speed-up panel and named in the panel's note. A slot whose row was not timed at 1 thread
    gets a cross like any untimed row."""

    @classmethod
    def setUpClass(cls):
        cls.temporary = tempfile.TemporaryDirectory()
        folder = Path(cls.temporary.name)
        rows = []
        for threads, scale in ((1, 1.0), (2, 1.8)):
            rows += [row("gemm-64", "mlir", gflops=100.0 * scale, threads=threads, noisy=threads == 2),
                     row("gemm-64", "libxsmm", gflops=90.0 * scale, threads=threads, noisy=False)]
        rows += [row("gemm-64-2t", "mlir", gflops=170.0, threads=2),
                 row("gemm-64-2t", "libxsmm", gflops=160.0, threads=2),
                 # Skipped at one thread, timed at two: no speed-up, a cross.
                 row("gemm-32", "mlir", status="skipped", threads=1), row("gemm-32", "mlir", gflops=80.0, threads=2)]
        metadata = {"cpu_model": "Two Core CPU", "isa": "avx512", "threads": 1, "thread_counts": [1, 2],
                    "peak_gflops": 230.0, "peaks_by_threads": {"2": {"fp32": 455.0}}}
        report = folder / "threads.json"
        report.write_text(json.dumps({"nkbench_version": "0.1", "metadata": metadata,
                                      "rows": [dict(r, c_dtype="f32") for r in rows]}))
        cls.result = run_script(report, "--out", folder / "plots")
        cls.scaling = folder / "plots" / "scaling-f32-avx512.svg"

    @classmethod
    def tearDownClass(cls):
        cls.temporary.cleanup()

    def test_left_out_of_the_speedup_panel_with_a_note(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        ids = svg_ids(self.scaling)
        self.assertFalse([i for i in ids if i.endswith(":gemm-64-2t")])
        texts = [element.text for element in ElementTree.parse(self.scaling).iter() if element.text]
        self.assertNotIn("gemm-64-2t", texts)  # no tick label over an empty slot
        text = svg_text(self.scaling)
        self.assertIn("not in this panel (no run at 1 thread):", text)
        self.assertIn("gemm-64-2t: ran at 2 threads only", text)

    def test_every_slot_of_the_panel_has_a_bar_or_a_cross(self):
        ids = svg_ids(self.scaling)
        for backend in ("mlir", "libxsmm"):
            self.assertIn(f"scaling-2t:{backend}:gemm-64", ids)
        self.assertIn("scaling-2t-unmeasured:mlir:gemm-32", ids)
        self.assertIn("mlir: 1 skipped at 1 thread", svg_text(self.scaling))
        self.assertTrue(is_hatched(self.scaling, "scaling-2t:mlir:gemm-64"))  # noisy at 2 threads
        self.assertFalse(is_hatched(self.scaling, "scaling-2t:libxsmm:gemm-64"))


def text_extent(element):
    """(left, right) in SVG units of a text element that matplotlib wrote as text, measured with
    the font it names, as a viewer lays it out."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath
    style = element.get("style")
    weight, size = re.search(r"font: (?:(\d+) )?([\d.]+)px", style).groups()
    font = FontProperties(family="DejaVu Sans", size=float(size), weight=int(weight or 400))
    width, _, _ = TextToPath().get_text_width_height_descent(element.text, font, ismath=False)
    anchor = re.search(r"text-anchor: (\w+)", style)
    shift = {"start": 0, "middle": width / 2, "end": width}[anchor.group(1) if anchor else "start"]
    left = float(element.get("x")) - shift
    return left, left + width


class TitlesFitNarrowFigures(unittest.TestCase):
    """A one-case report draws the narrowest figures; their title and caption must still be whole,
    on the figure and not cut off at its edges."""

    def test_title_and_caption_fit_a_one_case_figure(self):
        metadata = {"cpu_model": "Intel(R) Xeon(R) Platinum 8480+ Sapphire Rapids", "isa": "avx512-bf16",
                    "threads": 2, "date": "2026-01-02T19:21:05Z", "peak_gflops": 150.0,
                    "peaks_by_threads": {"2": {"fp32": 300.0, "bf16": 600.0}}}
        rows = [dict(row("c1", backend, dtype="bf16", isa="avx512-bf16", gflops=gflops, ratio=gflops / 100.0,
                         threads=2), c_dtype="bf16")
                for backend, gflops in (("libxsmm", 100.0), ("mlir", 120.0), ("mlir-default", 20.0))]
        label = "bf16->bf16 C, avx512-bf16, 2 threads"
        caption = ("CPU: Intel(R) Xeon(R) Platinum 8480+ Sapphire Rapids · ISA: avx512-bf16 · threads: 2 · "
                   "run: 2026-01-02 19:21 UTC")
        titles = {"gflops": "GFLOPS per case", "ratio": "Speed relative to libxsmm (same run)",
                  "compile": "Compile / JIT / primitive-creation cost",
                  "ablation": "Nanokernel ablation: mlir vs mlir-default"}
        with tempfile.TemporaryDirectory() as folder:
            report = Path(folder) / "one.json"
            report.write_text(json.dumps({"nkbench_version": "0.1", "metadata": metadata, "rows": rows}))
            result = run_script(report, "--out", Path(folder) / "plots")
            self.assertEqual(result.returncode, 0, result.stderr)
            for figure, title in titles.items():
                path = Path(folder) / "plots" / f"{figure}-bf16-cbf16-avx512-bf16-2t.svg"
                root = ElementTree.parse(path).getroot()
                width = float(root.get("width").removesuffix("pt"))
                texts = {element.text: element for element in root.iter() if element.tag.endswith("text")}
                for whole in (f"{title} — {label}", caption):
                    with self.subTest(figure=figure, text=whole):
                        self.assertIn(whole, texts)  # whole, on one line
                        left, right = text_extent(texts[whole])
                        self.assertGreaterEqual(left, 0)
                        self.assertLessEqual(right, width)


class BadInput(unittest.TestCase):
    """Each bad input is one line on stderr naming the file, and exit status 2."""

    def setUp(self):
        self.temporary = tempfile.TemporaryDirectory()
        self.folder = Path(self.temporary.name)
        self.good = self.folder / "good.json"
        self.good.write_text(json.dumps(f32_report()))

    def tearDown(self):
        self.temporary.cleanup()

    def assert_rejected(self, path, reason):
        result = run_script(self.good, path, "--out", self.folder / "plots")
        self.assertEqual(result.returncode, BAD_INPUT, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn(str(path), lines[0])
        self.assertIn(reason, lines[0])
        self.assertFalse((self.folder / "plots").exists())

    def test_missing_file(self):
        self.assert_rejected(self.folder / "absent.json", "cannot read")

    def test_malformed_json(self):
        path = self.folder / "broken.json"
        path.write_text('{"metadata": {}, "rows": [')
        self.assert_rejected(path, "not valid JSON")

    def test_json_without_rows(self):
        path = self.folder / "empty.json"
        path.write_text(json.dumps({"metadata": {}, "rows": []}))
        self.assert_rejected(path, "no rows")

    def test_csv_with_header_only(self):
        path = self.folder / "empty.csv"
        write_csv(path, bf16_csv_rows()[:1])
        path.write_text(path.read_text().splitlines()[0] + "\n")
        self.assert_rejected(path, "no rows")

    def test_csv_that_is_not_a_report(self):
        path = self.folder / "other.csv"
        path.write_text("a,b\n1,2\n")
        self.assert_rejected(path, "missing column(s) case")

    def test_speed_that_is_not_a_number(self):
        path = self.folder / "bad-number.csv"
        rows = bf16_csv_rows()
        rows[0]["median_gflops"] = "fast"
        write_csv(path, rows)
        self.assert_rejected(path, "median_gflops 'fast' is not a number")

    def test_noisy_flag_that_is_not_a_boolean(self):
        path = self.folder / "bad-flag.csv"
        rows = [dict(record, noisy="0") for record in bf16_csv_rows()]
        rows[0]["noisy"] = "maybe"
        write_csv(path, rows)
        self.assert_rejected(path, "noisy 'maybe' is not true or false")



class CsvNotes(unittest.TestCase):
    """A note may hold any character: the CSV writer quotes it, the reader must keep it in its field."""

    def test_line_breaks_inside_a_quoted_note_stay_in_their_field(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "notes.csv"
            rows = bf16_csv_rows()
            rows[1]["note"] = "form\ffeed"  # not quoted: the writer quotes only at \r, \n, quotes and commas
            rows[2]["note"] = "line\u2028separator\x85next line"
            rows[3]["note"] = "carriage\rreturn, form\ffeed"  # quoted
            write_csv(path, rows)
            sys.path.insert(0, str(SCRIPT.parent))
            try:
                from nkplots.results import load_file
            finally:
                sys.path.pop(0)
            loaded = load_file(path)
            self.assertEqual([(r.case, r.backend) for r in loaded], [(r["case"], r["backend"]) for r in rows])
            result = run_script(path, "--out", Path(folder) / "plots")
            self.assertEqual(result.returncode, 0, result.stderr)


if __name__ == "__main__":
    unittest.main()
