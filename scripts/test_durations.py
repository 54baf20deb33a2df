"""Record how long each test takes, for the fast subset of the suite (`make test-fast`).

    FIGLANG_TEST_FIXTURE_TIMES=times python -m pytest -n 2 --dist loadfile --junitxml=times/full.xml
    python scripts/test_durations.py --replace times       # -> tests/durations.json
    FIGLANG_TEST_FIXTURE_TIMES=times python -m pytest -n 2 --dist loadfile -m "not slow" --junitxml=times/fast.xml
    python scripts/test_durations.py times                 # the larger of the two times per test and fixture

The file holds each test's seconds (setup + call + teardown, as pytest's JUnit report counts them) and each module
or session fixture's setup seconds (tests/conftest.py writes them to $FIGLANG_TEST_FIXTURE_TIMES). tests/conftest.py
marks `slow` every test over its limit, and every test that needs a fixture over it (whichever test of a module runs
first pays for the module's model); `-m "not slow"` leaves them out. A test or fixture not in the file (a new one)
counts as fast until the file is re-made. Merging keeps each larger time; `--replace` starts afresh.
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DURATIONS = REPO / "tests" / "durations.json"


def node_id(classname: str, name: str) -> str:
    """pytest's node id from a JUnit test case: classname ``tests.test_x`` and name ``test_y[p]`` are
    ``tests/test_x.py::test_y[p]`` (the suite has module-level tests only)."""
    return f"{classname.replace('.', '/')}.py::{name}"


def junit_times(path: Path) -> dict[str, float]:
    """Seconds per test of one JUnit XML report."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise SystemExit(f"{path}: not a readable JUnit XML report ({exc}); make one with pytest --junitxml={path}") from exc
    return {node_id(case.get("classname", ""), case.get("name", "")): float(case.get("time", 0.0)) for case in root.iter("testcase")}


def fixture_times(path: Path) -> dict[str, float]:
    """Setup seconds per fixture of one file that tests/conftest.py wrote."""
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}
    except (OSError, ValueError, AttributeError) as exc:
        raise SystemExit(f"{path}: not a fixture-times file of tests/conftest.py ({exc})") from exc


def merged(old: dict[str, float], reports: list[dict[str, float]]) -> dict[str, float]:
    """Each key's largest time over the recorded table and the new reports, rounded to 10 ms, sorted by key."""
    out = dict(old)
    for times in reports:
        for key, seconds in times.items():
            out[key] = max(out.get(key, 0.0), round(seconds, 2))
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="the folder of JUnit reports (*.xml) and fixture times (fixtures-*.json)")
    parser.add_argument("--replace", action="store_true", help="forget the recorded times first")
    parser.add_argument("--out", type=Path, default=DURATIONS, help=f"the file to write (default {DURATIONS.relative_to(REPO)})")
    args = parser.parse_args(argv)
    reports, fixtures = sorted(args.folder.glob("*.xml")), sorted(args.folder.glob("fixtures-*.json"))
    if not reports:
        raise SystemExit(f"{args.folder}: no JUnit report (*.xml); run pytest with --junitxml={args.folder}/full.xml")
    old = {} if args.replace or not args.out.is_file() else json.loads(args.out.read_text(encoding="utf-8"))
    table = {
        "tests": merged(old.get("tests", {}), [junit_times(p) for p in reports]),
        "fixtures": merged(old.get("fixtures", {}), [fixture_times(p) for p in fixtures]),
    }
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(table, indent=0) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(f"{args.out}: {len(table['tests'])} tests ({sum(table['tests'].values()):.0f} s), {len(table['fixtures'])} fixtures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
