"""kill -9 the real daemon at random moments: every trigger still gets exactly one reply.

Seeded and bounded: `LIVEREVIEW_CRASH_SEED` fixes the kill schedule and the workload (the
seed is printed; where a kill lands in the daemon's work still depends on timing, and so
does which threads a follow-up can go to). The fake
GitLab answers with latency and the fake LLM with a delay, so kills land while an ack, an
LLM call, a reply POST or a store commit is in flight. After the kills one clean run must
answer what is left, then stop on SIGTERM with exit code 0, and the fake GitLab and the
store must agree: no trigger lost, none answered twice, nothing answered that must not be.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial

import pytest

from livereview.core.triggers import replied_to
from livereview.sandbox.gitlab.state import JSON, FakeGitLab
from tests.databases import job_rows
from tests.e2e.conftest import PROJECT, Daemon, Sandbox, wait_for, write_config

BOT = "livereview"
DEFAULT_SEED = 20240611
KILLS = 32
STARTUP_KILLS = 0.25  # this share of the kills lands during start-up
KILL_DURING_STARTUP = (0.05, 1.2)  # seconds after the process starts
KILL_AFTER_START = (0.0, 1.5)  # seconds after it logs daemon_started
FINAL_TIMEOUT = 60.0
RETRY_FILES = {"src/retry.py": (
    "def retry(fn):\n    return fn()\n",
    "import time\n\n\ndef retry(fn, attempts=3):\n    for i in range(attempts):\n"
    "        try:\n            return fn()\n        except OSError:\n"
    "            time.sleep(2 ** i)\n    raise RuntimeError('gave up')\n",
)}
# Lines added by each MR's diff (a position must name a line of the diff).
ADDED_LINES = {"src/cache.py": (4, 8, 9), "src/retry.py": (4, 5, 7, 9, 10)}
QUESTIONS = ("is this lock needed?", "what happens on a timeout?", "can this deadlock?",
             "why not a dataclass?", "is the backoff bounded?", "who calls this?",
             "should this be async?", "what about writes?")
HUMANS = ("alice", "carol", "dave")


@dataclass
class Workload:
    """The notes the test created, and which of them the bot must (not) answer."""

    sandbox: Sandbox
    rng: random.Random
    mrs: dict[int, str]  # iid -> the file its diff touches
    expected: dict[int, tuple[int, str]] = field(default_factory=dict)  # note -> (iid, disc)
    forbidden: dict[int, str] = field(default_factory=dict)  # note -> why not
    planted_bot: set[int] = field(default_factory=set)  # bot-authored notes the test made
    kinds: Counter[str] = field(default_factory=Counter)
    _n: int = 0

    @property
    def gitlab(self) -> FakeGitLab:
        return self.sandbox.gitlab

    def _question(self) -> str:
        self._n += 1
        return f"{self.rng.choice(QUESTIONS)} (#{self._n})"

    def discussion_of(self, iid: int, note_id: int) -> JSON:
        return next(d for d in self.gitlab.discussions(PROJECT, iid)
                    if any(n["id"] == note_id for n in d["notes"]))

    def _expect(self, iid: int, note: JSON, kind: str) -> None:
        note_id = int(str(note["id"]))
        self.expected[note_id] = (iid, str(self.discussion_of(iid, note_id)["id"]))
        self.kinds[kind] += 1

    def general(self, iid: int) -> None:
        note = self.gitlab.add_note(PROJECT, iid, author=self.rng.choice(HUMANS),
                                    body=f"@{BOT} {self._question()}")
        self._expect(iid, note, "general")

    def diff_line(self, iid: int) -> None:
        path = self.mrs[iid]
        line = self.rng.choice(ADDED_LINES[path])
        note = self.gitlab.add_note(PROJECT, iid, author=self.rng.choice(HUMANS),
                                    body=f"Hey @{BOT}, {self._question()}",
                                    position={"new_path": path, "new_line": line})
        assert note["type"] == "DiffNote", note
        self._expect(iid, note, "diff_line")

    def answered_threads(self, iid: int) -> list[JSON]:
        """Threads whose last note is a bot reply (so every trigger in them is answered):
        a human reply there is a trigger whatever the daemon's timing."""
        out = []
        for d in self.gitlab.discussions(PROJECT, iid):
            last = d["notes"][-1]
            if last["author"]["username"] == BOT and replied_to(str(last["body"])):
                out.append(d)
        return out

    def follow_up(self, iid: int) -> bool:
        """A reply in a thread the bot already answered; only while no daemon runs."""
        threads = self.answered_threads(iid)
        if not threads:
            return False
        thread = self.rng.choice(threads)
        mention = self.rng.random() < 0.3
        body = (f"@{BOT} and {self._question()}" if mention
                else f"Thanks. But {self._question()}")
        note = self.gitlab.add_note(PROJECT, iid, author=self.rng.choice(HUMANS), body=body,
                                    reply_to_discussion=str(thread["id"]))
        self._expect(iid, note, "follow_up")
        return True

    def noise(self, iid: int) -> None:
        """A note that must never be answered (each starts a discussion of its own)."""
        kind = self.rng.choice(("plain", "system", "self", "code_span", "quote", "fence",
                                "email"))
        who = self.rng.choice(HUMANS)
        if kind == "plain":
            note = self.gitlab.add_note(PROJECT, iid, author=who, body="LGTM, no question.")
        elif kind == "system":
            note = self.gitlab.add_note(PROJECT, iid, author=who, system=True,
                                        body=f"mentioned @{BOT} in a commit")
        elif kind == "self":
            note = self.gitlab.add_note(PROJECT, iid, author=BOT, body=f"@{BOT} note to self")
            self.planted_bot.add(int(str(note["id"])))
        elif kind == "code_span":
            note = self.gitlab.add_note(PROJECT, iid, author=who,
                                        body=f"Typing `@{BOT}` summons the bot.")
        elif kind == "quote":
            note = self.gitlab.add_note(PROJECT, iid, author=who,
                                        body=f"> @{BOT} said so\n\nI disagree with that.")
        elif kind == "fence":
            note = self.gitlab.add_note(PROJECT, iid, author=who,
                                        body=f"Example:\n\n```\n@{BOT} help\n```\n")
        else:
            note = self.gitlab.add_note(PROJECT, iid, author=who,
                                        body=f"Mail ops@{BOT}.example.com about it.")
        self.forbidden[int(str(note["id"]))] = kind

    def new_discussion(self) -> None:
        """A mention that starts a discussion: a trigger whatever the daemon is doing."""
        iid = self.rng.choice(list(self.mrs))
        (self.general if self.rng.random() < 0.5 else self.diff_line)(iid)

    def between_kills(self) -> None:
        """The daemon is dead: any kind of note may be added."""
        roll = self.rng.random()
        iid = self.rng.choice(list(self.mrs))
        if roll < 0.40:
            if not self.follow_up(iid):
                self.general(iid)
        elif roll < 0.65:
            self.general(iid)
        elif roll < 0.85:
            self.diff_line(iid)
        else:
            self.noise(iid)


def _events(daemons: list[Daemon]) -> list[list[dict[str, object]]]:
    out = []
    for daemon in daemons:
        lines = []
        for line in daemon.output().splitlines():
            if line.startswith("{"):
                try:
                    lines.append(json.loads(line))
                except ValueError:  # the last line of a killed daemon may be cut short
                    continue
        out.append(lines)
    return out


def _started_or_gone(daemon: Daemon) -> bool:
    return "daemon_started" in daemon.output() or daemon.process.poll() is not None


@pytest.mark.timeout(300)
@pytest.mark.creates_database("a kill may land while the first daemon migrates its new file")
def test_kill_9_at_random_moments_loses_and_duplicates_no_reply(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon], database_url: str) -> None:
    seed = int(os.environ.get("LIVEREVIEW_CRASH_SEED") or DEFAULT_SEED)
    # The kill schedule has its own generator: which follow-ups are possible depends on the
    # daemon's progress, and must not shift the kill moments of a given seed.
    rng = random.Random(seed)
    print(f"\ncrash test: LIVEREVIEW_CRASH_SEED={seed}")
    started = time.monotonic()

    sqlite = database_url.startswith("sqlite")
    # On PostgreSQL a killed daemon's leases expire before the next one takes its work
    # over (on SQLite the one process always holds them), a job killed in its POST window
    # after the step timeout: short ones keep this test about crashes, not about waiting.
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url,
                 sandbox.db if sqlite else database_url,
                 hot_poll_interval_seconds=0.2, poll_interval_seconds=2,
                 retry_base_seconds=0.05, shutdown_grace_seconds=10, log_format="json",
                 **({} if sqlite else {"lease_seconds": 1.0, "step_timeout_seconds": 3.0}))
    _jobs = partial(job_rows, f"sqlite:///{sandbox.db}" if sqlite else database_url)
    # The loop guards (a reply budget per MR, "a human answering within seconds is a bot")
    # have tests of their own; here they would skip triggers of this fast, busy workload.
    with sandbox.config.open("a", encoding="utf-8") as config:
        config.write("\n[bot]\nmax_replies_per_mr_per_hour = 10000\n"
                     "automated_reply_seconds = 0.0\n")
    sandbox.gitlab_server.latency_seconds = rng.uniform(0.02, 0.05)
    sandbox.llm.llm.delay_seconds = rng.uniform(0.1, 0.3)
    gitlab = sandbox.gitlab
    # Polling every 0.2 s spends gitlab.com's 600 requests a minute in seconds, and the
    # daemon then rightly paces itself (up to the window's reset): a self-managed instance
    # without a limit, its default, keeps this test about crashes and its waits short.
    gitlab.rate_limit_per_minute = None
    second = gitlab.add_mr(PROJECT, title="Retry flaky calls with backoff",
                           description="Network calls fail now and then.", author="bob",
                           source_branch="retry", files=RETRY_FILES)
    work = Workload(sandbox, random.Random(f"{seed}:start"),
                    {sandbox.iid: "src/cache.py", second: "src/retry.py"})

    # Before the first start: mentions on both MRs, and notes that must stay unanswered.
    for iid in work.mrs:
        for _ in range(3):
            work.general(iid)
        for _ in range(2):
            work.diff_line(iid)
        for _ in range(3):
            work.noise(iid)

    daemons: list[Daemon] = []
    in_flight_kills = post_window_kills = 0
    for kill in range(KILLS):
        work.rng = random.Random(f"{seed}:{kill}")
        daemon = start_daemon()
        daemons.append(daemon)
        if rng.random() < STARTUP_KILLS:  # while it imports, migrates, learns who it is
            delay = rng.uniform(*KILL_DURING_STARTUP)
        else:  # while it polls and works; start-up takes ~1 s on 2 cores
            wait_for(partial(_started_or_gone, daemon), timeout=30)
            delay = rng.uniform(*KILL_AFTER_START)
        if rng.random() < 0.3:  # a new mention while the daemon runs
            first = rng.uniform(0, delay)
            time.sleep(first)
            work.new_discussion()
            time.sleep(delay - first)
        else:
            time.sleep(delay)
        assert daemon.process.poll() is None, f"daemon exited by itself:\n{daemon.output()}"
        daemon.process.kill()
        assert daemon.process.wait(timeout=10) == -9
        rows = _jobs()
        if any(r["state"] in ("acked", "answered") for r in rows):
            in_flight_kills += 1
        if any(r["post_started_at"] is not None and r["state"] != "posted" for r in rows):
            post_window_kills += 1
        for _ in range(work.rng.choice((0, 1, 1, 2, 3))):
            work.between_kills()
    kill_phase = time.monotonic() - started

    # Final clean run: answers what is left, then stops on SIGTERM.
    final = start_daemon()
    daemons.append(final)

    def bot_replies() -> list[JSON]:
        return [n for n in gitlab.notes_by(BOT) if int(str(n["id"])) not in work.planted_bot]

    def settled() -> bool:
        answered = {replied_to(str(n["body"])) for n in bot_replies()}
        if not {str(i) for i in work.expected} <= answered:
            return False
        rows = _jobs()
        return len(rows) >= len(work.expected) and all(r["state"] == "posted" for r in rows)

    if final.process.poll() is not None:
        pytest.fail(f"the final daemon exited early:\n{final.output()[-3000:]}")
    try:
        wait_for(settled, timeout=FINAL_TIMEOUT)
    except BaseException:
        answered = {replied_to(str(n["body"])) for n in bot_replies()}
        print(f"seed {seed}: not settled; unanswered triggers: "
              f"{sorted(i for i in work.expected if str(i) not in answered)}; open jobs: "
              f"{[dict(r) for r in _jobs() if r['state'] != 'posted']}")
        print(f"final daemon log tail:\n{final.output()[-3000:]}")
        raise
    # A few more poll cycles: a duplicate that comes late would show up now.
    polled = sum(r[1].endswith("/discussions") for r in gitlab.requests)
    wait_for(lambda: sum(r[1].endswith("/discussions") for r in gitlab.requests) >= polled + 6,
             timeout=15)
    assert final.stop() == 0, final.output()[-3000:]
    elapsed = time.monotonic() - started

    # -- GitLab: exactly one reply per trigger, in the trigger's discussion ---------------
    replies = bot_replies()
    assert all(replied_to(str(n["body"])) for n in replies), "a bot note without a marker"
    per_target = Counter(replied_to(str(n["body"])) for n in replies)
    duplicates = {t: c for t, c in per_target.items() if c > 1}
    lost = sorted(i for i in work.expected if per_target[str(i)] == 0)
    unwanted = sorted(str(t) for t in per_target if int(str(t)) not in work.expected)
    assert not duplicates, f"seed {seed}: answered more than once: {duplicates}"
    assert not lost, f"seed {seed}: never answered: {lost}"
    assert not unwanted, (f"seed {seed}: answered notes that must not be: "
                          f"{[(t, work.forbidden.get(int(str(t)))) for t in unwanted]}")
    for note_id, (iid, discussion_id) in work.expected.items():
        discussion = work.discussion_of(iid, note_id)
        assert str(discussion["id"]) == discussion_id
        in_thread = [n for n in discussion["notes"]
                     if n["author"]["username"] == BOT
                     and replied_to(str(n["body"])) == str(note_id)]
        assert len(in_thread) == 1, f"seed {seed}: reply to {note_id} not in its discussion"
        awards = [a for a in gitlab.awards_on(PROJECT, iid, note_id)
                  if a["user"]["username"] == BOT]
        assert len(awards) <= 1, f"seed {seed}: {len(awards)} bot awards on {note_id}"
    for note_id in work.forbidden:
        iid = next(i for i in work.mrs
                   if any(n["id"] == note_id for d in gitlab.discussions(PROJECT, i)
                          for n in d["notes"]))
        assert not [a for a in gitlab.awards_on(PROJECT, iid, note_id)
                    if a["user"]["username"] == BOT], f"seed {seed}: 👀 on ignored {note_id}"

    # -- the store: intact, every job posted, pointing at exactly the bot's notes ---------
    if sqlite:
        with closing(sqlite3.connect(f"file:{sandbox.db}?mode=ro", uri=True)) as con:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = _jobs()
    assert Counter(r["state"] for r in rows) == {"posted": len(rows)}
    assert sorted(int(str(r["host_message_id"])) for r in rows) == sorted(work.expected)
    posted_ids = [str(r["posted_message_id"]) for r in rows]
    assert len(set(posted_ids)) == len(posted_ids)
    assert sorted(posted_ids) == sorted(str(n["id"]) for n in replies)
    for r in rows:
        reply = next(n for n in replies if str(n["id"]) == str(r["posted_message_id"]))
        assert replied_to(str(reply["body"])) == str(r["host_message_id"])

    # -- the logs: what the crashes made the daemon do; no traceback in any run ---------
    logs = _events(daemons)
    events = Counter(str(e.get("event")) for lines in logs for e in lines)
    never_started = sum(1 for lines in logs[:-1]
                        if not any(e.get("event") == "daemon_started" for e in lines))
    print(f"crash test: seed={seed} kills={KILLS} (before daemon_started: {never_started}, "
          f"with jobs mid-flight: {in_flight_kills}, inside the post window: "
          f"{post_window_kills}) triggers={len(work.expected)} ({dict(work.kinds)}) "
          f"ignored={len(work.forbidden)} replies={len(replies)} "
          f"adopted={events['reply_adopted']} replied_events={events['replied']} "
          f"job_retry={events['job_retry']} ack_skipped={events['ack_skipped']} "
          f"llm_calls={len(sandbox.llm.llm.prompts)} kill_phase={kill_phase:.1f}s "
          f"elapsed={elapsed:.1f}s")
    assert len(work.expected) >= 20
    for i, daemon in enumerate(daemons):
        assert "Traceback" not in daemon.output(), (
            f"seed {seed}: daemon run {i} of {len(daemons)} logged a traceback:\n"
            f"{daemon.output()[-3000:]}")
