"""`livereview demo`: the README's first command runs the real loop in a sandbox."""

from __future__ import annotations

import pytest

from livereview.cli import main


def test_demo_answers_every_scripted_question(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "questions answered: 3 of 3" in out
    assert out.count("👀 livereview acknowledged it") == 3
    assert "sandbox answer engine" in out  # labelled as not a real model
    assert "time to reply:  median" in out
