"""The benchmark's plots, drawn into docs/img/ from what the figures recorded (common.SERIES).

- ack.png: time to 👀, the distribution (empirical CDF) per figure and host;
- idle.png: idle requests per minute against watched repositories, per host;
- rss.png: peak RSS against open MRs.

matplotlib is the `bench` extra (`pip install -c constraints.txt -e '.[bench]'`); without
it `draw` says so in one line and draws nothing. A plot with no data (its figures were not
run, e.g. `--only`) is left as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

Series = dict[str, dict[str, list[tuple[float, float]]]]


def draw(series: Series, out: Path) -> list[Path]:
    """Writes each plot that has data; returns the files written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        print(f"plots: not drawn ({exc}); install the `bench` extra for docs/img/")
        return []
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, title, xlabel, ylabel, fill in (
            ("ack", "Time to 👀 (loopback fakes, 50 ms per request)", "seconds",
             "share of mentions acknowledged", _cdf),
            ("idle", "Idle requests per minute", "watched repositories",
             "requests per idle minute", _lines),
            ("rss", "Peak RSS of the daemon", "open MRs", "MiB", _lines)):
        data = {label: points for label, points in series.get(name, {}).items() if points}
        if not data:
            continue
        fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
        fill(ax, data)
        ax.set_title(title.replace("👀", "ack"))  # the default font has no emoji
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        path = out / f"{name}.png"
        fig.savefig(path, metadata={"Software": None})  # no version stamp: a stable file
        plt.close(fig)
        written.append(path)
    return written


def _cdf(ax: Axes, data: dict[str, list[tuple[float, float]]]) -> None:
    for label, points in sorted(data.items()):
        values = sorted(y for _, y in points)
        shares = [(i + 1) / len(values) for i in range(len(values))]
        ax.step(values, shares, where="post",
                label=f"{label.replace('👀', 'eyes')} (n={len(values)})")
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_ylim(0, 1.02)


def _lines(ax: Axes, data: dict[str, list[tuple[float, float]]]) -> None:
    for label, points in sorted(data.items()):
        ordered = sorted(points)
        ax.plot([x for x, _ in ordered], [y for _, y in ordered], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
