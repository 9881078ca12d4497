"""`<MR>`: every host's web URL form, the short HOST:REPO!IID form, and one line for
anything else."""

from __future__ import annotations

import pytest

from livereview.core.model import MRKey
from livereview.settings import HostSettings, Secret
from livereview.tools.errors import BadInput
from livereview.tools.target import parse_mr

HOSTS = [
    HostSettings(name="gl", type="gitlab", url="https://gitlab.example/sub", token=Secret("t")),
    HostSettings(name="gh", type="github", url="https://api.github.com", token=Secret("t")),
    HostSettings(name="ghe", type="github", url="https://ghe.example/api/v3",
                 token=Secret("t")),
    HostSettings(name="bb", type="bitbucket-cloud", url="https://api.bitbucket.org/2.0",
                 username="lr-bot", token=Secret("t")),
    HostSettings(name="dc", type="bitbucket-server", url="https://bb.example/context",
                 token=Secret("t")),
]


@pytest.mark.parametrize(("text", "key"), [
    ("https://gitlab.example/sub/group/sub/app/-/merge_requests/7",
     MRKey("gl", "group/sub/app", 7)),
    ("https://gitlab.example/sub/group/app/-/merge_requests/7/diffs#note_12",
     MRKey("gl", "group/app", 7)),
    ("https://GitLab.Example/sub/group/app/-/merge_requests/7?tab=notes",
     MRKey("gl", "group/app", 7)),
    ("https://github.com/acme/widgets/pull/42", MRKey("gh", "acme/widgets", 42)),
    ("https://github.com/acme/widgets/pull/42/files", MRKey("gh", "acme/widgets", 42)),
    ("https://ghe.example/acme/widgets/pull/3", MRKey("ghe", "acme/widgets", 3)),
    ("https://bitbucket.org/acme/widgets/pull-requests/5", MRKey("bb", "acme/widgets", 5)),
    ("https://bitbucket.org/acme/widgets/pull-requests/5/overview",
     MRKey("bb", "acme/widgets", 5)),
    ("https://bb.example/context/projects/ACME/repos/widgets/pull-requests/9",
     MRKey("dc", "ACME/widgets", 9)),
    ("https://bb.example/context/projects/ACME/repos/widgets/pull-requests/9/diff",
     MRKey("dc", "ACME/widgets", 9)),
    ("gl:group/sub/app!7", MRKey("gl", "group/sub/app", 7)),
    ("  dc:ACME/widgets!9 ", MRKey("dc", "ACME/widgets", 9)),
])
def test_an_mr_is_named_by_its_web_url_or_the_short_form(text: str, key: MRKey) -> None:
    assert parse_mr(HOSTS, text) == key


@pytest.mark.parametrize(("text", "words"), [
    ("https://gitlab.example/group/app/-/merge_requests/7", "not a merge request"),  # no /sub
    ("https://gitlab.other/sub/group/app/-/merge_requests/7", "not a merge request"),
    ("https://github.com/acme/widgets/issues/42", "not a merge request"),
    ("https://bb.example/context/projects/ACME/repos/widgets/browse", "not a merge request"),
    ("https://bitbucket.org/acme/widgets/pull-requests/x", "not a merge request"),
    ("gitlab:group/app!7", "no configured host named 'gitlab'"),
    ("gl:group/app", "expected the MR's web URL"),
    ("", "expected the MR's web URL"),
    ("gl:group/app!99999999999999999999999", "expected the MR's web URL"),
])
def test_anything_else_is_one_line_naming_it(text: str, words: str) -> None:
    with pytest.raises(BadInput) as caught:
        parse_mr(HOSTS, text)
    message = str(caught.value)
    assert words in message and "\n" not in message
    assert message.startswith(text.strip())
