"""GitLab's REST v4 JSON → the review model: pure functions, no I/O.

Every field is read through `JsonObject`, so a payload that is not what GitLab documents
ends in a `BadResponse` naming the endpoint and the field. Shapes: the recorded gitlab.com
payloads in tests/fixtures/gitlab and https://docs.gitlab.com/api/merge_requests/,
https://docs.gitlab.com/api/discussions/, https://docs.gitlab.com/api/emoji_reactions/.
"""

from __future__ import annotations

import re

from livereview.core.model import (
    Actor,
    Anchor,
    ChangedMR,
    Commit,
    MergeRequest,
    Message,
    MRKey,
    Reaction,
    Thread,
)
from livereview.hosts.base import BadResponse
from livereview.hosts.payload import JsonObject

# GitLab names the users it creates for automation itself:
# - project and group access tokens: `project_{project_id}_bot_{random_string}`,
#   `group_{group_id}_bot_{random_string}` (before GitLab 16: `project_{id}_bot`, then
#   `…_bot1`, `…_bot2`): https://docs.gitlab.com/user/project/settings/project_access_tokens/#bot-users-for-projects,
#   https://docs.gitlab.com/user/group/settings/group_access_tokens/#bot-users-for-groups
# - service accounts without a chosen username: `service_account_{random}`, or
#   `service_account_group_{group_id}_{random}`: https://docs.gitlab.com/api/service_accounts/,
#   https://docs.gitlab.com/api/group_service_accounts/
# Entities that have it also carry `bot` (User#bot?: every automated user type), e.g.
# GET /user and an MR's author; a note's author is a UserBasic without it, hence the names.
_BOT_USERNAME = re.compile(r"(?:project|group)_\d+_bot(?:\d*|_[0-9a-f]+)|service_account_\w+")


def is_bot_username(username: str) -> bool:
    return _BOT_USERNAME.fullmatch(username) is not None


def actor(user: JsonObject | None) -> Actor:
    if user is None:  # a deleted account: GitLab shows it as the Ghost User
        return Actor("0", "ghost", "Ghost User")
    username = user.text_or("username")
    return Actor(user.token("id"), username, user.text_or("name"),
                 user.flag("bot") or is_bot_username(username))


def anchor(position: JsonObject | None) -> Anchor | None:
    """Where a diff note points: a line, a range (`line_range`: its start is the range's
    first line, the position's own lines its last), or a whole file (`position_type:
    file`, no line). An image position is on no line of text: no anchor."""
    kind = "text" if position is None else position.text_or("position_type", "text")
    if position is None or kind not in ("text", "file"):
        return None
    new_path = position.text_or("new_path") or position.text_or("old_path")
    if not new_path:
        return None
    line_range = position.obj_or_none("line_range") if kind == "text" else None
    start = line_range.obj_or_none("start") if line_range is not None else None
    return Anchor(
        new_path=new_path,
        old_path=position.text_or("old_path") or new_path,
        new_line=position.number_or_none("new_line") if kind == "text" else None,
        old_line=position.number_or_none("old_line") if kind == "text" else None,
        base_sha=position.text_or("base_sha"),
        start_sha=position.text_or("start_sha"),
        head_sha=position.text_or("head_sha"),
        start_new_line=start.number_or_none("new_line") if start is not None else None,
        start_old_line=start.number_or_none("old_line") if start is not None else None,
    )


def message(note: JsonObject, thread_id: str) -> Message:
    created = note.time("created_at")
    return Message(
        id=note.token("id"),
        thread_id=thread_id,
        author=actor(note.obj_or_none("author")),
        body=note.text_or("body"),
        created_at=created,
        updated_at=note.time_or_none("updated_at") or created,
        system=note.flag("system"),
    )


def thread(discussion: JsonObject) -> Thread:
    thread_id = discussion.token("id")
    notes = discussion.objects("notes")
    messages = tuple(message(n, thread_id) for n in notes)
    first = notes[0] if notes else None
    resolvable = first is not None and first.flag("resolvable")
    return Thread(
        id=thread_id,
        messages=messages,
        anchor=anchor(first.obj_or_none("position")) if first is not None else None,
        resolvable=resolvable,
        resolved=resolvable and all(n.flag("resolved") for n in notes if n.flag("resolvable")),
        individual=discussion.flag("individual_note"),
    )


def merge_request(key: MRKey, data: JsonObject, *, listed: bool = False) -> MergeRequest:
    """The MR of "Get single MR", or (`listed`) of a row of "List merge requests", which
    carries every field read here but `diff_refs`: its base and start are then None, not
    read (https://docs.gitlab.com/api/merge_requests/#list-merge-requests; the list's
    entity is API::Entities::MergeRequestBasic, `diff_refs` is exposed only by
    API::Entities::MergeRequest, lib/api/entities/merge_request.rb)."""
    refs = None if listed else data.obj_or_none("diff_refs")
    return MergeRequest(
        key=key,
        title=data.text_or("title"),
        description=data.text_or("description"),
        author=actor(data.obj_or_none("author")),
        source_branch=data.text_or("source_branch"),
        target_branch=data.text_or("target_branch"),
        state=data.text_or("state", "opened"),
        # A row's `sha` is MergeRequest#diff_head_sha (MergeRequestBasic `expose
        # :diff_head_sha, as: :sha`): the latest diff's head_commit_sha once it is persisted,
        # as diff_refs' head_sha is (app/models/merge_request.rb): the same head either way.
        head_sha=(refs.text_or("head_sha") if refs else "") or data.text_or("sha"),
        base_sha=None if listed else (refs.text_or("base_sha") if refs else ""),
        start_sha=None if listed else (refs.text_or("start_sha") if refs else ""),
        web_url=data.text_or("web_url"),
        created_at=data.time("created_at"),
        updated_at=data.time("updated_at"),
        # https://docs.gitlab.com/api/merge_requests/#get-single-mr: `reviewers`, users
        reviewers=tuple(Actor(r.token("id"), r.text_or("username"))
                        for r in data.objects("reviewers")),
    )


def changed_mr(host: str, repo: str, mr: JsonObject, *, with_mr: bool = False) -> ChangedMR:
    """A listing row; `with_mr`: with the MR it shows (its diff refs not read) — None when
    the row cannot be one. The listing needs only a row's iid, updated_at and state: one
    odd row (a null `created_at`, a reviewer without an id) must not fail every MR's
    listing. Its MR is then read whole, where its trouble is its own (sync/poller.py)."""
    iid = mr.number("iid")
    return ChangedMR(repo, iid, mr.time("updated_at"), mr.text_or("state", "opened"),
                     _listed_mr(MRKey(host, repo, iid), mr) if with_mr else None)


def _listed_mr(key: MRKey, row: JsonObject) -> MergeRequest | None:
    try:
        return merge_request(key, row, listed=True)
    except BadResponse:
        return None


def commit(data: JsonObject) -> Commit:
    return Commit(
        sha=data.token("id"),
        title=data.text_or("title"),
        created_at=data.time("created_at" if data.has("created_at") else "committed_date"),
        parent_ids=data.texts("parent_ids"),
        # `message` and `author_name` (https://docs.gitlab.com/api/merge_requests/
        # #get-single-merge-request-commits); the e-mail address is left behind.
        message=data.text_or("message") or data.text_or("title"),
        author=data.text_or("author_name"),
    )


def reaction(award: JsonObject) -> Reaction:
    # `created_at`: when the award was made (https://docs.gitlab.com/api/emoji_reactions/).
    return Reaction(award.text("name"), actor(award.obj_or_none("user")), award.token("id"),
                    award.time_or_none("created_at"))


def unified(files: list[JsonObject]) -> str:
    """GitLab's per-file `diff` (hunks only) as one unified diff."""
    out = []
    for f in files:
        diff = f.text_or("diff")
        out.append(f"--- a/{f.text('old_path')}\n+++ b/{f.text('new_path')}\n{diff}"
                   + ("" if diff.endswith("\n") else "\n"))
    return "".join(out)


def todo_target(todo: JsonObject) -> tuple[str, int] | None:
    """(project path, MR iid) of a to-do about a merge request, if it names them."""
    project, target = todo.obj_or_none("project"), todo.obj_or_none("target")
    if project is None or target is None or not target.has("iid"):
        return None
    return project.text("path_with_namespace"), target.number("iid")
