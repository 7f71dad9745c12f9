"""A plan's report (interface/plan_report.py): it reads the plan's results and runs no model;
its files appear whole; what it says is what the plan holds."""

import numpy as np
import pytest

from replicaplan.core.startup import Startup
from replicaplan.interface import plan_report
from replicaplan.planner import plan


@pytest.fixture(scope="module")
def quiet_hour():
    rate = np.r_[np.full(20, 2.0), np.full(20, 9.0), np.full(20, 3.0)]
    return plan.plan(rate, startup=Startup(2), n_requests=1000)


def test_the_report_reads_the_sensitivity_the_planner_computed(quiet_hour, tmp_path):
    assert quiet_hour.sensitivity is None
    with pytest.raises(ValueError, match="the plan has no start-up sensitivity"):
        plan_report.report_sensitivity(quiet_hour)
    full = plan.with_sensitivity(quiet_hour)
    assert plan.with_sensitivity(full) is full  # computed once
    assert list(full.sensitivity.startups) == sorted({*plan.SENSITIVITY_STARTUPS, 2})
    target = plan_report.write_report(quiet_hour, tmp_path / "report")
    names = sorted(p.name for p in target.iterdir())
    assert names == [
        "adapter.yaml",
        "fleet.png",
        "hpa.yaml",
        "keda.yaml",
        "report.md",
        "startup.png",
    ]
    text = (target / "report.md").read_text()
    assert f"{quiet_hour.point.mu_star:.2f}" in text


def test_a_report_directory_in_use_is_refused_and_left_alone(quiet_hour, tmp_path):
    used = tmp_path / "report"
    used.mkdir()
    (used / "mine.txt").write_text("keep")
    with pytest.raises(ValueError, match="exists and is not empty"):
        plan_report.write_report(quiet_hour, used)
    assert [p.name for p in used.iterdir()] == ["mine.txt"]
