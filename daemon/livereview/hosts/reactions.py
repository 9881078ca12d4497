"""Which reactions each host offers, and the one it acknowledges a comment with when
`bot.ack_reaction` is not set (docs/DESIGN.md §4, "Ack").

- GitHub: a fixed set of eight reaction contents
  (https://docs.github.com/en/rest/reactions/reactions#about-reactions); the award-emoji
  names people know from GitLab are accepted for them (`thumbsup` → `+1`).
- GitLab: any name of its emoji set (https://docs.gitlab.com/api/emoji_reactions/): too
  many to list here, so only the server can refuse one (the API answers an unknown name with
  404 "Award Emoji Name is not a valid emoji name": lib/api/award_emoji.rb).
- Bitbucket Data Center 7+: the comment-likes plugin takes an emoticon *name* in the path
  (`…/reactions/{emoticon}`), and its picker is a short fixed list — thumbsup, thumbsdown,
  heart, thinking_face, laughing (the enum Data Center clients send; a name it does not
  know, or an emoji character, is answered 400: https://stackoverflow.com/q/77370498).
  `eyes` is not among them, so Data Center acks with 🤔 by default.
- Bitbucket Cloud: no reactions API at all: the ack is a short reply.
"""

from __future__ import annotations

from dataclasses import dataclass

# GitHub's eight contents, with the award-emoji names people configure mapped onto them.
GITHUB_CONTENTS = {"+1": "+1", "-1": "-1", "laugh": "laugh", "confused": "confused",
                   "heart": "heart", "hooray": "hooray", "rocket": "rocket", "eyes": "eyes",
                   "thumbsup": "+1", "thumbsdown": "-1", "smile": "laugh", "laughing": "laugh",
                   "tada": "hooray"}
DATA_CENTER_EMOTICONS = ("thumbsup", "thumbsdown", "heart", "thinking_face", "laughing")


@dataclass(frozen=True)
class Offered:
    """A host's reactions: its name for people, its default ack, and the names it takes
    (`None`: any name of the host's own emoji set; empty: no reactions at all)."""

    host: str
    default: str
    names: tuple[str, ...] | None
    note: str = ""  # where the names are not listed: what the host does with an unknown one

    def offers(self, name: str) -> bool | None:
        """Whether the host takes `name`; None where only the host itself can tell."""
        return None if self.names is None else name in self.names


OFFERED = {
    "gitlab": Offered("GitLab", "eyes", None, "GitLab takes any name of its emoji set; if it "
                      "refuses this one, acks become a short reply"),
    "github": Offered("GitHub", "eyes", tuple(GITHUB_CONTENTS)),
    "bitbucket-server": Offered("Bitbucket Data Center", "thinking_face", DATA_CENTER_EMOTICONS),
    "bitbucket-cloud": Offered("Bitbucket Cloud", "", ()),
    "local": Offered("a local repository", "eyes", None),
}
_ANY = Offered("this host", "eyes", None)


def offered(host_type: str) -> Offered:
    return OFFERED.get(host_type, _ANY)


def ack_reaction(host_type: str, configured: str | None) -> str:
    """The reaction the bot acks with on a host of this type: the configured one, else the
    host's default (one it offers)."""
    return configured or offered(host_type).default
