"""`daemon.replica = "name"` labels every sample; without it nothing changes
(docs/DESIGN.md §12)."""

from __future__ import annotations

from prometheus_client import generate_latest

from livereview.metrics import Metrics


def _samples(metrics: Metrics) -> list[str]:
    metrics.prepare({"gitlab"}, {"gl"})
    metrics.replies.labels("gitlab", "posted").inc()
    text = generate_latest(metrics.registry).decode()
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_a_named_replica_labels_every_sample() -> None:
    samples = _samples(Metrics(replica="eu-1"))
    assert samples
    assert all('replica="eu-1"' in line for line in samples)
    assert ('livereview_replies_total{host_type="gitlab",outcome="posted",replica="eu-1"} 1.0'
            in samples)


def test_without_a_name_no_sample_has_the_label() -> None:
    samples = _samples(Metrics())
    assert 'livereview_replies_total{host_type="gitlab",outcome="posted"} 1.0' in samples
    assert not any("replica=" in line for line in samples)
