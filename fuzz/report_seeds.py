"""Writes fuzz_report seeds from the committed reports: each report cut to its
first rows (whole reports exceed the fuzzer's input size), once as it is and
once as shard 1/2 of its run, so that merge reaches its checks."""
import json
import pathlib
import sys

out, results = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for n, path in enumerate(sorted(results.rglob("*.json"))):
    report = json.loads(path.read_text())
    report["rows"] = report["rows"][:2]
    (out / f"{n}-{path.stem}.json").write_text(json.dumps(report))
    report["metadata"]["shard"] = "1/2"
    (out / f"{n}-{path.stem}-shard.json").write_text(json.dumps(report))
