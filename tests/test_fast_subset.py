"""The fast subset (`make test-fast`): which tests tests/conftest.py marks slow, from tests/durations.json, and how
scripts/test_durations.py makes that file from pytest's JUnit report and the fixture times."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from script_loader import load_script

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import pytest

@pytest.fixture(scope="module")
def model():
    return "a model loaded once for the module"

def test_quick():
    pass

def test_recorded_slow():
    pass

def test_uses_the_heavy_fixture(model):
    pass
"""


def _collected(root: Path, *args: str) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
        cwd=root,
        capture_output=True,
        text=True,
    )
    return sorted(line.split("::")[1] for line in run.stdout.splitlines() if "::" in line)


def test_slow_tests_and_users_of_a_slow_fixture_leave_the_fast_subset(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text((REPO / "tests" / "conftest.py").read_text(encoding="utf-8"))
    (tmp_path / "tests" / "test_probe.py").write_text(PROBE)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers = slow: recorded over a second\n")
    everything = ["test_quick", "test_recorded_slow", "test_uses_the_heavy_fixture"]
    assert _collected(tmp_path, "-m", "not slow") == everything  # nothing recorded: all count as fast
    times = {
        "tests": {"tests/test_probe.py::test_quick": 0.2, "tests/test_probe.py::test_recorded_slow": 4.0},
        "fixtures": {"tests/test_probe.py::model": 30.0},
    }
    (tmp_path / "tests" / "durations.json").write_text(json.dumps(times))
    assert _collected(tmp_path, "-m", "not slow") == ["test_quick"]
    assert _collected(tmp_path, "-m", "slow") == ["test_recorded_slow", "test_uses_the_heavy_fixture"]


def test_durations_script_keeps_each_larger_time(tmp_path: Path) -> None:
    script = load_script("scripts/test_durations.py")
    times = tmp_path / "times"
    times.mkdir()
    (times / "full.xml").write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_a" name="test_x[p-1]" time="0.50"/>'
        '<testcase classname="tests.test_a" name="test_y" time="3.216"/>'
        "</testsuite></testsuites>"
    )
    (times / "fixtures-gw0-1.json").write_text(json.dumps({"tests/test_a.py::model": 12.5}))
    out = tmp_path / "durations.json"
    assert script.main([str(times), "--out", str(out)]) == 0
    first = json.loads(out.read_text())
    assert first == {
        "tests": {"tests/test_a.py::test_x[p-1]": 0.5, "tests/test_a.py::test_y": 3.22},
        "fixtures": {"tests/test_a.py::model": 12.5},
    }
    (times / "full.xml").write_text(
        '<testsuites><testsuite><testcase classname="tests.test_a" name="test_x[p-1]" time="2"/></testsuite></testsuites>'
    )
    (times / "fixtures-gw0-1.json").write_text(json.dumps({"tests/test_a.py::model": 1.0}))
    script.main([str(times), "--out", str(out)])
    merged = json.loads(out.read_text())
    assert merged["tests"]["tests/test_a.py::test_x[p-1]"] == 2.0 and merged["tests"]["tests/test_a.py::test_y"] == 3.22
    assert merged["fixtures"]["tests/test_a.py::model"] == 12.5
    script.main([str(times), "--out", str(out), "--replace"])
    assert json.loads(out.read_text())["tests"] == {"tests/test_a.py::test_x[p-1]": 2.0}
