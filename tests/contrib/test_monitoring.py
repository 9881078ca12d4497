"""The monitoring artefacts under contrib/: the Grafana dashboard, the Prometheus alerting
rules with their promtool unit tests, the example scrape config — and the daemon's own
metric exposition, linted by `promtool check metrics`.

promtool comes from Debian's `prometheus` package (.ci/install-promtool). Locally a missing
promtool skips those tests; with CI set it fails them."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest

from livereview import __version__
from livereview.metrics import Metrics

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "contrib" / "grafana" / "livereview-dashboard.json"
PROMETHEUS_DIR = ROOT / "contrib" / "prometheus"
RULES = PROMETHEUS_DIR / "livereview-alerts.yml"
RULE_TESTS = PROMETHEUS_DIR / "livereview-alerts.test.yml"
SCRAPE_CONFIG = PROMETHEUS_DIR / "prometheus-scrape.yml"

# What the dashboard and the alerts may refer to: exposed name -> (type, label names).
KNOWN_METRICS: dict[str, tuple[str, frozenset[str]]] = {
    "livereview_time_to_ack_seconds": ("histogram", frozenset({"host_type"})),
    "livereview_time_to_reply_seconds": ("histogram", frozenset({"host_type"})),
    "livereview_replies_total": ("counter", frozenset({"host_type", "outcome"})),
    "livereview_job_retries_total": ("counter", frozenset({"host_type", "cause"})),
    "livereview_acks_total": ("counter", frozenset({"host_type", "outcome"})),
    "livereview_host_requests_total": ("counter", frozenset({"host_type", "status_class"})),
    "livereview_rate_limited_total": ("counter", frozenset({"host_type"})),
    "livereview_rate_limit_remaining": ("gauge", frozenset({"host_type"})),
    "livereview_poll_cycle_seconds": ("histogram", frozenset()),
    "livereview_poll_requests": ("histogram", frozenset()),
    "livereview_list_strategy": ("gauge", frozenset({"host", "strategy"})),
    "livereview_last_poll_success_timestamp_seconds": ("gauge", frozenset({"host"})),
    "livereview_jobs": ("gauge", frozenset({"state"})),
    "livereview_llm_tokens_total": ("counter", frozenset({"kind"})),
    "livereview_unhealthy_repos": ("gauge", frozenset({"host"})),
}
HISTOGRAM_SUFFIXES = ("_bucket", "_count", "_sum")
METRIC_NAME = re.compile(r"livereview_[a-z_]+")
DATASOURCE = "${datasource}"
ALERTS = {"LivereviewNoSuccessfulPoll", "LivereviewSlowAck", "LivereviewRepliesFailing",
          "LivereviewRepliesRefused",
          "LivereviewRateLimited", "LivereviewUnhealthyRepos"}


def series_names() -> set[str]:
    """Names a PromQL expression may use: histograms only through their series."""
    names: set[str] = set()
    for name, (kind, _) in KNOWN_METRICS.items():
        if kind == "histogram":
            names.update(name + suffix for suffix in HISTOGRAM_SUFFIXES)
        else:
            names.add(name)
    return names


def base_name(series: str) -> str:
    for suffix in HISTOGRAM_SUFFIXES:
        if series.endswith(suffix) and series.removesuffix(suffix) in KNOWN_METRICS:
            return series.removesuffix(suffix)
    return series


def load_dashboard() -> dict[str, Any]:
    dashboard: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return dashboard


def panel_exprs(panel: dict[str, Any]) -> Iterator[str]:
    for target in panel.get("targets", []):
        if target.get("expr"):
            yield str(target["expr"])


def references_datasource(datasource: Any) -> bool:
    if isinstance(datasource, str):
        return datasource == DATASOURCE
    return (isinstance(datasource, dict) and datasource.get("uid") == DATASOURCE
            and datasource.get("type", "prometheus") == "prometheus")


def exercised_metrics() -> Metrics:
    """A Metrics with one sample on each metric, label values as the daemon uses them."""
    metrics = Metrics()
    metrics.time_to_ack.labels("gitlab").observe(1.5)
    metrics.time_to_reply.labels("gitlab").observe(12.0)
    metrics.replies.labels("gitlab", "posted").inc()
    metrics.job_retries.labels("gitlab", "auth").inc()
    metrics.acks.labels("gitlab", "ok").inc()
    metrics.host_requests.labels("gitlab", "2xx").inc()
    metrics.rate_limited.labels("gitlab").inc()
    metrics.rate_limit_remaining.labels("gitlab").set(597)
    metrics.poll_cycle.observe(0.3)
    metrics.poll_requests.observe(2)
    metrics.list_strategy.labels("main", "instance").set(1)
    metrics.active_looks.labels("main", "unchanged").inc()
    metrics.last_poll_success.labels("main").set(1_700_000_000)
    metrics.jobs.labels("pending").set(2)
    metrics.llm_tokens.labels("prompt").inc(1200)
    metrics.repo_unhealthy.labels("main").set(0)
    metrics.reviews.labels("gitlab", "changes_requested").inc()
    metrics.review_failures.labels("gitlab", "unreadable").inc()
    metrics.edit_answers_capped.labels("main").inc()
    metrics.review_seconds.labels("gitlab").observe(42.0)
    return metrics


def promtool() -> str:
    found = shutil.which("promtool")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("promtool is not installed; CI should run .ci/install-promtool first")
    pytest.skip("promtool is not installed (Debian: .ci/install-promtool, or "
                "`apt-get install --no-install-recommends prometheus`)")


def run_promtool(*args: str, stdin: Path | None = None) -> subprocess.CompletedProcess[str]:
    """promtool in contrib/prometheus/, where the relative rule_files paths point."""
    binary = promtool()
    if stdin is None:
        return subprocess.run([binary, *args], cwd=PROMETHEUS_DIR, capture_output=True,  # noqa: S603
                              text=True, timeout=60, check=False)
    with stdin.open("rb") as handle:
        result = subprocess.run([binary, *args], cwd=PROMETHEUS_DIR, stdin=handle,  # noqa: S603
                                capture_output=True, timeout=60, check=False)
    return subprocess.CompletedProcess(result.args, result.returncode,
                                       result.stdout.decode(), result.stderr.decode())


# --- the metric names everything below relies on ---------------------------------------------


def test_known_metrics_are_the_ones_the_daemon_exposes() -> None:
    exposed: dict[str, tuple[str, frozenset[str]]] = {}
    for family in exercised_metrics().registry.collect():
        name = family.name + "_total" if family.type == "counter" else family.name
        series = {name, family.name + "_bucket"}
        labels = {label for sample in family.samples if sample.name in series
                  for label in sample.labels if label != "le"}
        exposed[name] = (family.type, frozenset(labels))
    assert {name: exposed.get(name) for name in KNOWN_METRICS} == KNOWN_METRICS


def test_exposition_has_build_info_and_the_process_metrics_operators_expect() -> None:
    """Was: the custom registry dropped process_* and python_*, and no build_info."""
    text = generate_latest(Metrics().registry).decode()
    assert (f'livereview_build_info{{python="{platform.python_version()}",'
            f'version="{__version__}"}} 1.0') in text
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes",
                 "process_open_fds", "process_start_time_seconds", "python_info",
                 "python_gc_collections_total"):
        assert re.search(rf"^{name}[{{ ]", text, re.MULTILINE), name


# --- Grafana dashboard -----------------------------------------------------------------------


def test_dashboard_header() -> None:
    dashboard = load_dashboard()
    assert dashboard["uid"] == "livereview"
    assert dashboard["schemaVersion"] >= 39
    assert dashboard["title"]
    assert dashboard.get("id") is None  # importable into any Grafana


def test_dashboard_variables() -> None:
    variables = {v["name"]: v for v in load_dashboard()["templating"]["list"]}
    datasource = variables["datasource"]
    assert (datasource["type"], datasource["query"]) == ("datasource", "prometheus")
    host_type = variables["host_type"]
    assert host_type["type"] == "query"
    assert host_type["multi"] is True
    assert references_datasource(host_type["datasource"])
    query = host_type["query"]
    query = query["query"] if isinstance(query, dict) else query
    assert query == "label_values(livereview_replies_total, host_type)"


def test_every_panel_is_well_formed() -> None:
    panels = load_dashboard()["panels"]
    assert panels
    ids = [panel.get("id") for panel in panels]
    assert len(ids) == len(set(ids)), f"duplicate panel ids: {ids}"
    allowed = series_names()
    problems: list[str] = []
    for panel in panels:
        title = f"panel {panel.get('id')} ({panel.get('title')!r})"
        if not isinstance(panel.get("id"), int):
            problems.append(f"{title}: no integer id")
        if panel.get("type") not in {"timeseries", "stat"}:
            problems.append(f"{title}: type {panel.get('type')!r}")
        if not str(panel.get("description", "")).strip():
            problems.append(f"{title}: no description")
        grid = panel.get("gridPos", {})
        if not (all(isinstance(grid.get(key), int) for key in "hwxy")
                and grid["w"] > 0 and grid["h"] > 0 and grid["x"] + grid["w"] <= 24):
            problems.append(f"{title}: bad gridPos {grid}")
        if not references_datasource(panel.get("datasource")):
            problems.append(f"{title}: datasource {panel.get('datasource')} is not {DATASOURCE}")
        for target in panel.get("targets", []):
            if "datasource" in target and not references_datasource(target["datasource"]):
                problems.append(f"{title}: target {target.get('refId')} datasource "
                                f"{target['datasource']} is not {DATASOURCE}")
        exprs = list(panel_exprs(panel))
        if not exprs:
            problems.append(f"{title}: no target with an expr")
        for expr in exprs:
            names = set(METRIC_NAME.findall(expr))
            if not names:
                problems.append(f"{title}: {expr!r} uses no livereview metric")
            if names - allowed:
                problems.append(f"{title}: unknown metric(s) {sorted(names - allowed)} in {expr!r}")
    assert not problems, "\n".join(problems)


def test_panels_do_not_overlap() -> None:
    cells: dict[tuple[int, int], str] = {}
    for panel in load_dashboard()["panels"]:
        grid = panel["gridPos"]
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                other = cells.setdefault((x, y), panel["title"])
                assert other == panel["title"], f"{panel['title']!r} overlaps {other!r}"


def test_dashboard_shows_every_metric() -> None:
    shown = {base_name(name) for panel in load_dashboard()["panels"]
             for expr in panel_exprs(panel) for name in METRIC_NAME.findall(expr)}
    assert shown == set(KNOWN_METRICS)


def test_host_type_variable_filters_every_metric_that_has_the_label() -> None:
    for panel in load_dashboard()["panels"]:
        for expr in panel_exprs(panel):
            labelled = [name for name in METRIC_NAME.findall(expr)
                        if "host_type" in KNOWN_METRICS[base_name(name)][1]]
            for name in labelled:
                assert f'{name}{{host_type=~"$host_type"}}' in expr, (panel["title"], expr)


# --- Prometheus rules and config (text checks; promtool does the YAML) -----------------------


def alert_blocks() -> dict[str, list[str]]:
    """Alert name -> the text of each rule with that name."""
    blocks: dict[str, list[str]] = {}
    for block in re.split(r"\n(?= *- alert: )", RULES.read_text(encoding="utf-8"))[1:]:
        name = re.match(r" *- alert: (\w+)", block)
        assert name, block
        blocks.setdefault(name.group(1), []).append(block)
    return blocks


def test_rules_cover_the_alerts_with_labels_and_annotations() -> None:
    text = RULES.read_text(encoding="utf-8")
    assert re.search(r"^groups:\n  - name: livereview$", text, re.MULTILINE)
    blocks = alert_blocks()
    assert set(blocks) == ALERTS
    for name, rules in blocks.items():
        for rule in rules:
            for needle in ("severity:", "summary:", "description:",
                           f'runbook: "docs/troubleshooting.md#{name.lower()}"'):
                assert needle in rule, f"{name}: no {needle}"
    no_poll = "\n".join(blocks["LivereviewNoSuccessfulPoll"])
    assert "time() - livereview_last_poll_success_timestamp_seconds > 600" in no_poll
    assert "absent(livereview_last_poll_success_timestamp_seconds" in no_poll


def heading_anchors(page: Path) -> set[str]:
    """The anchors MkDocs gives a page's headings (Python-Markdown's toc slugify: lower
    case, punctuation dropped, spaces to hyphens)."""
    anchors = set()
    for heading in re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE):
        anchors.add(re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower()))
    return anchors


def test_each_alerts_runbook_is_a_section_of_the_troubleshooting_page() -> None:
    runbooks = set(re.findall(r'runbook: "([^"]+)"', RULES.read_text(encoding="utf-8")))
    tested = set(re.findall(r"runbook: (\S+)", RULE_TESTS.read_text(encoding="utf-8")))
    assert runbooks == tested == {f"docs/troubleshooting.md#{name.lower()}" for name in ALERTS}
    anchors = heading_anchors(ROOT / "docs" / "troubleshooting.md")
    missing = {runbook for runbook in runbooks if runbook.partition("#")[2] not in anchors}
    assert not missing


def test_rules_and_their_tests_use_known_metrics() -> None:
    allowed = series_names()
    for path in (RULES, RULE_TESTS):
        unknown = set(METRIC_NAME.findall(path.read_text(encoding="utf-8"))) - allowed
        assert not unknown, f"{path.name}: {sorted(unknown)}"


def test_every_alert_has_a_firing_and_a_quiet_unit_test() -> None:
    text = RULE_TESTS.read_text(encoding="utf-8")
    cases = re.findall(r"alertname: (\w+)\n\s+exp_alerts:(.*)", text)
    assert {name for name, _ in cases} == ALERTS
    for alert in ALERTS:
        expectations = {expected.strip() for name, expected in cases if name == alert}
        assert "[]" in expectations, f"{alert}: no case where it must stay quiet"
        assert "" in expectations, f"{alert}: no case where it must fire"


def test_scrape_config_text() -> None:
    text = SCRAPE_CONFIG.read_text(encoding="utf-8")
    assert "job_name: livereview" in text
    assert '"127.0.0.1:9464"' in text
    assert "scrape_interval: 15s" in text
    assert re.search(r"^rule_files:\n  - livereview-alerts\.yml$", text, re.MULTILINE)


# --- promtool --------------------------------------------------------------------------------


def test_promtool_check_rules() -> None:
    result = run_promtool("check", "rules", RULES.name)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "FAILED" not in output, output  # lint findings (duplicate rules) exit 0 but say so


def test_promtool_check_config_loads_the_rules() -> None:
    result = run_promtool("check", "config", SCRAPE_CONFIG.name)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "FAILED" not in output, output
    assert "1 rule files found" in output, output


def test_promtool_rule_unit_tests() -> None:
    result = run_promtool("test", "rules", RULE_TESTS.name)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_dashboard_queries_parse(tmp_path: Path) -> None:
    """Each panel query, with the variables filled in, as a recording rule: promtool parses it.
    (JSON is YAML, so no YAML library is needed.)"""
    exprs = [expr.replace("$host_type", ".*") for panel in load_dashboard()["panels"]
             for expr in panel_exprs(panel)]
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"livereview:dashboard_query_{n}", "expr": expr}
        for n, expr in enumerate(exprs)]}]}
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(json.dumps(rules), encoding="utf-8")
    result = run_promtool("check", "rules", str(path))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"SUCCESS: {len(exprs)} rules found" in output, output


def test_metric_exposition_passes_promtool_lint(tmp_path: Path) -> None:
    metrics = exercised_metrics()
    unexercised = [family.name for family in metrics.registry.collect() if not family.samples]
    assert not unexercised, f"exercised_metrics() should observe these too: {unexercised}"
    exposition = tmp_path / "metrics.txt"
    exposition.write_bytes(generate_latest(metrics.registry))
    result = run_promtool("check", "metrics", stdin=exposition)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (result.stdout + result.stderr).strip() == ""
