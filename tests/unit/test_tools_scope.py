"""The agent tools' reach on every host type: the watched repos and the agent_repos patterns,
matched on the path the host will resolve; and the pattern rules (`*` within a segment,
`**` across them), which hold for any path (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from livereview.core.model import MRKey
from livereview.settings import (
    AISettings,
    BotSettings,
    ConfigError,
    DaemonSettings,
    HostSettings,
    RepoSettings,
    Secret,
    Settings,
    parse,
)
from livereview.settings.repo_globs import RepoPattern
from livereview.tools.errors import BadInput, OutOfReach
from livereview.tools.scope import Reach
from livereview.tools.target import parse_mr

HOSTS = (
    HostSettings(name="gl", type="gitlab", url="https://gitlab.example", token=Secret("t"),
                 agent_repos=("tools/**",)),
    HostSettings(name="gh", type="github", url="https://api.github.com", token=Secret("t"),
                 agent_repos=("acme/lib-*",)),
    HostSettings(name="bb", type="bitbucket-cloud", url="https://api.bitbucket.org/2.0",
                 username="lr-bot", token=Secret("t")),
    HostSettings(name="dc", type="bitbucket-server", url="https://bb.example",
                 token=Secret("t")),
)
REPOS = (RepoSettings(host="gl", path="Group/App"), RepoSettings(host="gh", path="acme/widgets"),
         RepoSettings(host="bb", path="acme/widgets"), RepoSettings(host="dc", path="ACME/widgets"))


def reach() -> Reach:
    return Reach.of(Settings(hosts=HOSTS, repos=REPOS, daemon=DaemonSettings(),
                             bot=BotSettings(), ai=AISettings()))


def key(text: str) -> MRKey:
    return reach().key(parse_mr(HOSTS, text))


@pytest.mark.parametrize(("text", "expected"), [
    ("https://gitlab.example/group/app/-/merge_requests/7", MRKey("gl", "Group/App", 7)),
    ("gl:GROUP/APP/!7", MRKey("gl", "Group/App", 7)),
    ("gl:tools/sub/deep/x!1", MRKey("gl", "tools/sub/deep/x", 1)),
    ("https://github.com/Acme/Widgets/pull/42", MRKey("gh", "acme/widgets", 42)),
    ("gh:acme/LIB-json!3", MRKey("gh", "acme/LIB-json", 3)),
    ("https://bitbucket.org/acme/widgets/pull-requests/5", MRKey("bb", "acme/widgets", 5)),
    ("https://bb.example/projects/acme/repos/Widgets/pull-requests/9",
     MRKey("dc", "ACME/widgets", 9)),
])
def test_a_watched_or_allowed_repo_is_reached_as_configured(text: str, expected: MRKey) -> None:
    assert key(text) == expected


@pytest.mark.parametrize(("text", "error"), [
    ("https://github.com/acme/secret/pull/1", OutOfReach),
    ("gh:acme/lib-json/x!1", BadInput),  # GitHub repos are owner/name
    ("gh:acme%2Fsecret!1", OutOfReach),
    ("https://bitbucket.org/other/widgets/pull-requests/5", OutOfReach),
    ("https://bb.example/projects/OTHER/repos/widgets/pull-requests/9", OutOfReach),
    ("gl:tools!1", BadInput),  # one segment: a GitLab project id, not a path
    ("gl:7!1", BadInput),
    ("gl:group/app/..!1", BadInput),
    ("gl:tools/%2e%2e/secret!1", BadInput),  # an escaped .. is a ..
    ("gl:group/app%00!1", BadInput),
    ("gl:Group/\u212aey!1", BadInput),  # the Kelvin sign lower-cases to k
    ("gl:toolsx/app!1", OutOfReach),
])
def test_anything_else_is_refused_naming_what_to_change(text: str, error: type) -> None:
    with pytest.raises(error) as caught:
        key(text)
    assert "\n" not in str(caught.value)
    if error is OutOfReach:
        assert "agent_repos" in str(caught.value)


def test_a_host_without_agent_repos_reaches_its_watched_repos_only() -> None:
    assert key("bb:acme/widgets!1") == MRKey("bb", "acme/widgets", 1)
    with pytest.raises(OutOfReach, match="host 'bb'"):
        key("bb:acme/widgets2!1")


SEGMENT = st.text("abAB-_.*?", min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..") and "**" not in s)
PATH = st.lists(st.text("abAB-_.", min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..")), min_size=1, max_size=5).map("/".join)


@given(st.lists(SEGMENT, min_size=1, max_size=4), PATH)
def test_a_pattern_without_double_stars_matches_only_paths_of_its_length(
        segments: list[str], path: str) -> None:
    if RepoPattern.of("/".join(segments), fold=True).matches(path):
        assert path.count("/") == len(segments) - 1


@given(PATH, PATH)
def test_double_star_at_the_end_matches_everything_below_and_nothing_else(
        prefix: str, path: str) -> None:
    pattern = RepoPattern.of(f"{prefix}/**", fold=False)
    assert pattern.matches(f"{prefix}/{path}")
    assert not pattern.matches(prefix)
    if pattern.matches(path):
        assert path.startswith(prefix + "/")


@given(PATH)
def test_a_literal_pattern_matches_its_path_in_any_ascii_case_and_only_it(path: str) -> None:
    pattern = RepoPattern.of(path, fold=True)
    assert pattern.matches(path.upper()) and pattern.matches(path.lower())
    assert not pattern.matches(path + "x") and not pattern.matches("x/" + path)


def test_settings_refuse_a_wrong_pattern_naming_the_key() -> None:
    data = {"hosts": [{"name": "gl", "type": "gitlab", "url": "https://gitlab.example",
                       "token_env": "T", "agent_repos": ["ok/*", "bad/[x]"]}],
            "repos": [{"host": "gl", "path": "a/b"}]}
    with pytest.raises(ConfigError, match=r"hosts\[0\]\.agent_repos.*character classes"):
        parse(data, {"T": "secret", "OPENAI_API_KEY": "k"})
