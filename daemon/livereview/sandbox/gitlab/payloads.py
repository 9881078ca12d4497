"""The read side of the fake GitLab: lookups, queries and the REST v4 JSON it answers with.

`GitLabPayloads` is the base class of `FakeGitLab` (state.py), which owns the state and
the lock. Shapes follow the recorded gitlab.com responses in tests/fixtures/gitlab and
GitLab's own source (gitlabhq/gitlabhq: lib/api/*.rb, lib/api/entities/*.rb).
"""

from __future__ import annotations

import hashlib
import threading

from livereview.sandbox.gitlab.model import (
    JSON,
    NOT_FOUND,
    Award,
    Discussion,
    GitLabError,
    MergeRequest,
    Note,
    Project,
    Todo,
    User,
    Version,
    diff_lines,
    iso,
    sha1,
    unified_diff,
)
from livereview.sandbox.loopback import locked

# GitLab's answer when a position names no line of the diff (line_code cannot be derived).
_LINE_CODE_ERROR = (
    '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid line code"]}'
)


class GitLabPayloads:
    """Lookups, read-only queries, payload builders and position parsing of `FakeGitLab`."""

    lock: threading.RLock
    base_url: str
    bot_username: str
    users: dict[str, User]
    projects: dict[int, Project]
    _notes: dict[int, Note]
    _todos: list[Todo]
    _diff_cache: dict[tuple[str, str, int, int], tuple[object, object, list[JSON]]]
    # A file's diff over these many bytes is collapsed (sent empty), then too large.
    collapse_file_bytes = 100_000
    too_large_file_bytes = 200_000

    @property
    def bot(self) -> JSON:
        """The user that owns the token (what GET /user answers)."""
        with self.lock:
            return self.user_json(self.users[self.bot_username], full=True)

    # ---- lookups (callers hold the lock) -------------------------------------------------
    def find_project(self, ref: str | int) -> Project:
        """As lib/api/helpers.rb `find_project`: an id, else the full path
        (`find_by_full_path(id, follow_redirects: true)`, app/models/concerns/routable.rb):
        the current path in any case first, then a former path's redirect route."""
        key = str(ref).lower()
        for p in self.projects.values():
            if str(p.id) == key or p.path.lower() == key:
                return p
        for p in self.projects.values():
            if "/" in key and key in (r.lower() for r in p.redirects):
                return p
        raise GitLabError(404, "404 Project Not Found")

    def find_mr(self, project: str | int, iid: int) -> MergeRequest:
        mr = self.find_project(project).mrs.get(int(iid))
        if mr is None:
            raise GitLabError(404, NOT_FOUND)
        return mr

    def find_discussion(self, mr: MergeRequest, discussion_id: str) -> Discussion:
        for d in mr.discussions:
            if d.id == discussion_id:
                return d
        raise GitLabError(404, "404 Discussion Not Found")

    def find_note(self, mr: MergeRequest, note_id: int) -> Note:
        note = self._notes.get(int(note_id))
        if note is None or note.discussion.mr is not mr:
            raise GitLabError(404, NOT_FOUND)
        return note

    # ---- queries ---------------------------------------------------------------------------
    @locked
    def discussions(self, project: str, iid: int) -> list[JSON]:
        return [self.discussion_json(d) for d in self.find_mr(project, iid).discussions]

    @locked
    def notes_by(self, username: str) -> list[JSON]:
        return [self.note_json(n) for _, n in sorted(self._notes.items())
                if n.author.username == username]

    @locked
    def todos(self, username: str) -> list[Todo]:
        """Every todo of that user, newest first (the order of GET /todos)."""
        return [t for t in reversed(self._todos) if t.user.username == username]

    @locked
    def raw_file(self, project: str, path: str, ref: str | None) -> str:
        p = self.find_project(project)
        sha = p.branches.get(ref or p.default_branch, ref or "")
        content = p.trees.get(sha, {}).get(path)
        if content is None:
            raise GitLabError(404, "404 File Not Found")
        return content

    @locked
    def tree(self, project: str, directory: str, ref: str | None) -> list[JSON]:
        """GET /projects/:id/repository/tree?path=&ref=: the entries directly in a folder."""
        p = self.find_project(project)
        sha = p.branches.get(ref or p.default_branch, ref or "")
        folder = directory.strip("/")
        entries: dict[str, JSON] = {}
        for path in sorted(p.trees.get(sha, {})):
            parent, _, rest = path.partition(folder + "/") if folder else ("", "", path)
            if parent or (folder and not path.startswith(folder + "/")):
                continue
            name, _, deeper = rest.partition("/")
            full = f"{folder}/{name}" if folder else name
            entries[name] = {"id": sha1(p.id, sha, full), "name": name,
                             "type": "tree" if deeper else "blob", "path": full,
                             "mode": "040000" if deeper else "100644"}
        if folder and not entries:
            raise GitLabError(404, "404 Tree Not Found")
        return list(entries.values())

    @locked
    def awards_on(self, project: str, iid: int, note_id: int) -> list[JSON]:
        note = self.find_note(self.find_mr(project, iid), note_id)
        return [self.award_json(a) for a in note.awards]

    # ---- payload builders (callers hold the lock) -----------------------------------------
    def user_json(self, u: User, *, full: bool = False) -> JSON:
        digest = hashlib.md5(u.username.encode(), usedforsecurity=False).hexdigest()
        out: JSON = {
            "id": u.id, "username": u.username, "name": u.name, "state": "active",
            "locked": False, "avatar_url": f"https://www.gravatar.com/avatar/{digest}?s=80&d=identicon",
            "web_url": f"{self.base_url}/{u.username}",
        }
        if full:
            out.update(created_at=iso(u.created_at), bio="", location="", public_email=None,
                       email=f"{u.username}@example.com", bot=u.bot, is_admin=False,
                       can_create_group=False, can_create_project=False, two_factor_enabled=False,
                       external=False, private_profile=False)
        return out

    def project_json(self, p: Project) -> JSON:
        ns, _, name = p.path.rpartition("/")
        web = f"{self.base_url}/{p.path}"
        return {
            "id": p.id, "description": "", "name": name, "path": name,
            "name_with_namespace": " / ".join(p.path.split("/")), "path_with_namespace": p.path,
            "created_at": iso(p.created_at), "default_branch": p.default_branch, "web_url": web,
            "http_url_to_repo": f"{web}.git",
            "ssh_url_to_repo": f"git@{self.base_url.split('//')[-1]}:{p.path}.git",
            "visibility": "private",
            "only_allow_merge_if_all_discussions_are_resolved":
                p.only_allow_merge_if_all_discussions_are_resolved,
            "namespace": {"name": ns.rsplit("/", 1)[-1], "path": ns.rsplit("/", 1)[-1],
                          "kind": "group", "full_path": ns},
        }

    def mr_json(self, mr: MergeRequest, *, full: bool = False) -> JSON:
        p, ref = mr.project, f"!{mr.iid}"
        by = self.user_json(mr.state_by) if mr.state_by else None
        draft = mr.title.lower().startswith(("draft:", "[draft]", "wip:"))
        # MergeRequest#mergeable_discussions_state?: only the project setting makes an
        # unresolved thread block; only resolvable notes (DiffNote, DiscussionNote) count.
        unblocked = not p.only_allow_merge_if_all_discussions_are_resolved or all(
            n.resolved for d in mr.discussions for n in d.notes if n.resolvable)
        out: JSON = {
            "id": mr.id, "iid": mr.iid, "project_id": p.id, "title": mr.title,
            "description": mr.description, "state": mr.state, "created_at": iso(mr.created_at),
            "updated_at": iso(mr.updated_at),
            "merged_by": by if mr.state == "merged" else None,
            "merge_user": by if mr.state == "merged" else None,
            "merged_at": iso(mr.merged_at) if mr.merged_at else None,
            "closed_by": by if mr.state == "closed" else None,
            "closed_at": iso(mr.closed_at) if mr.closed_at else None,
            "target_branch": mr.target_branch, "source_branch": mr.source_branch,
            "user_notes_count": sum(not n.system for d in mr.discussions for n in d.notes),
            "upvotes": 0, "downvotes": 0, "author": self.user_json(mr.author), "assignees": [],
            "assignee": None,
            "reviewers": [self.user_json(u) for u in mr.reviewers], "source_project_id": p.id,
            "target_project_id": p.id, "labels": [], "draft": draft, "work_in_progress": draft,
            "milestone": None, "merge_when_pipeline_succeeds": False,
            "merge_status": "can_be_merged",
            "detailed_merge_status": "mergeable" if unblocked else "discussions_not_resolved",
            "sha": mr.head_sha, "merge_commit_sha": None, "squash_commit_sha": None,
            "discussion_locked": None, "should_remove_source_branch": None,
            "force_remove_source_branch": False, "reference": ref,
            "references": {"short": ref, "relative": ref, "full": f"{p.path}{ref}"},
            "web_url": f"{self.base_url}/{p.path}/-/merge_requests/{mr.iid}",
            "time_stats": {"time_estimate": 0, "total_time_spent": 0,
                           "human_time_estimate": None, "human_total_time_spent": None},
            "squash": False, "task_completion_status": {"count": 0, "completed_count": 0},
            "has_conflicts": False,
            "blocking_discussions_resolved": unblocked,
        }
        if full:
            v = mr.versions[-1]
            out.update(
                subscribed=True, changes_count=str(len(self._diffs(p, v.base, v.head))),
                latest_build_started_at=None, latest_build_finished_at=None,
                first_deployed_to_production_at=None, pipeline=None, head_pipeline=None,
                diff_refs={"base_sha": v.base, "head_sha": v.head, "start_sha": v.start},
                merge_error=None, first_contribution=False, user={"can_merge": True})
        return out

    def note_json(self, n: Note) -> JSON:
        mr = n.discussion.mr
        out: JSON = {
            "id": n.id, "type": n.type, "body": n.body, "attachment": None,
            "author": self.user_json(n.author), "created_at": iso(n.created_at),
            "updated_at": iso(n.updated_at), "system": n.system, "noteable_id": mr.id,
            "noteable_type": "MergeRequest", "project_id": mr.project.id, "commit_id": None,
        }
        if n.position is not None:
            out["position"] = dict(n.position)
        out["resolvable"] = n.resolvable
        if n.resolvable:  # lib/api/entities/note.rb exposes these only for resolvable notes
            out.update(resolved=n.resolved,
                       resolved_by=self.user_json(n.resolved_by) if n.resolved_by else None,
                       resolved_at=iso(n.resolved_at) if n.resolved_at else None)
        out.update(confidential=False, internal=False, imported=False, imported_from="none",
                   noteable_iid=mr.iid, commands_changes={})
        return out

    def discussion_json(self, d: Discussion) -> JSON:
        return {"id": d.id, "individual_note": d.individual,
                "notes": [self.note_json(n) for n in d.notes]}

    def commit_json(self, p: Project, sha: str) -> JSON:
        c = p.commits[sha]
        at = iso(c.created_at)
        email = f"{c.author.username}@example.com"
        return {
            "id": sha, "short_id": sha[:8], "created_at": at, "parent_ids": [],
            "title": c.title, "message": c.title + "\n", "author_name": c.author.name,
            "author_email": email, "authored_date": at, "committer_name": c.author.name,
            "committer_email": email, "committed_date": at, "trailers": {},
            "extended_trailers": {}, "web_url": f"{self.base_url}/{p.path}/-/commit/{sha}",
        }

    def _diffs(self, p: Project, base: str, head: str) -> list[JSON]:
        """Every file's diff entry (lib/api/entities/diff.rb), remembered per pair of trees:
        a page of an MR of 3 000 files must not diff them all again."""
        old_tree, new_tree = p.trees[base], p.trees[head]
        cache, limits = self._diff_cache, (self.collapse_file_bytes, self.too_large_file_bytes)
        hit = cache.get((base, head, *limits))
        if hit is not None and hit[0] is old_tree and hit[1] is new_tree:
            return hit[2]
        out = []
        for path in sorted(set(old_tree) | set(new_tree)):
            old, new = old_tree.get(path), new_tree.get(path)
            if old != new:
                diff = unified_diff(old or "", new or "", path)
                # GitLab empties a file's diff past its limits: collapsed (expandable in
                # the UI), too_large beyond (https://docs.gitlab.com/administration/diff_limits)
                size = len(diff.encode())
                collapsed = size > self.collapse_file_bytes
                out.append({
                    "diff": "" if collapsed else diff, "collapsed": collapsed,
                    "too_large": size > self.too_large_file_bytes, "new_path": path,
                    "old_path": path, "a_mode": "0" if old is None else "100644",
                    "b_mode": "0" if new is None else "100644", "new_file": old is None,
                    "renamed_file": False, "deleted_file": new is None, "generated_file": False,
                })
        cache[(base, head, *limits)] = (old_tree, new_tree, out)
        return out

    def version_json(self, mr: MergeRequest, v: Version, *, full: bool = False) -> JSON:
        diffs = self._diffs(mr.project, v.base, v.head)
        out: JSON = {
            "id": v.id, "head_commit_sha": v.head, "base_commit_sha": v.base,
            "start_commit_sha": v.start, "created_at": iso(v.created_at),
            "merge_request_id": mr.id, "state": "collected", "real_size": str(len(diffs)),
        }
        if full:
            out["commits"] = [self.commit_json(mr.project, s) for s in reversed(v.commits)]
            out["diffs"] = diffs
        return out

    def award_json(self, a: Award) -> JSON:
        return {"id": a.id, "name": a.name, "user": self.user_json(a.user),
                "created_at": iso(a.created_at), "updated_at": iso(a.created_at),
                "awardable_id": a.note.id, "awardable_type": "Note", "url": None}

    def todo_json(self, t: Todo) -> JSON:
        p = t.mr.project
        ident = {k: v for k, v in self.project_json(p).items() if k in {
            "id", "description", "name", "name_with_namespace", "path", "path_with_namespace",
            "created_at"}}
        url = f"{self.base_url}/{p.path}/-/merge_requests/{t.mr.iid}"
        return {
            "id": t.id, "project": ident, "author": self.user_json(t.author),
            "action_name": t.action, "target_type": "MergeRequest",
            "target": self.mr_json(t.mr),
            "target_url": f"{url}#note_{t.note.id}" if t.note else url,
            "body": t.note.body if t.note else t.mr.title, "state": t.state,
            "created_at": iso(t.created_at), "updated_at": iso(t.updated_at),
        }

    # ---- incoming positions (callers hold the lock) ---------------------------------------
    def _position(self, mr: MergeRequest, raw: JSON, *, api: bool) -> JSON:
        v = mr.versions[-1]
        if api:
            for key in ("base_sha", "start_sha", "head_sha", "position_type"):
                if not raw.get(key):
                    raise GitLabError(400, f"position[{key}] is missing", "error")
        base, start, head = (raw.get(k) or d for k, d in
                             (("base_sha", v.base), ("start_sha", v.start), ("head_sha", v.head)))
        new_path = raw.get("new_path") or raw.get("old_path")
        old_path = raw.get("old_path") or new_path
        try:
            old_line, new_line = (int(raw[k]) if raw.get(k) not in (None, "") else None
                                  for k in ("old_line", "new_line"))
        except (TypeError, ValueError):
            raise GitLabError(400, _LINE_CODE_ERROR) from None
        version = next((x for x in mr.versions if (x.base, x.start, x.head) == (base, start, head)),
                       None)
        diff = next((d["diff"] for d in self._diffs(mr.project, version.base, version.head)
                     if d["new_path"] == new_path), None) if version else None
        where = {"base_sha": base, "start_sha": start, "head_sha": head, "old_path": old_path,
                 "new_path": new_path}
        if raw.get("position_type") == "file" and api:
            # A comment on a whole file (GitLab 16.4+): no line, a file of the diff.
            if diff is None:
                raise GitLabError(400, "400 Bad request - Note {:base=>[\"Position is "
                                  "invalid\"]}")
            return {**where, "position_type": "file", "old_line": None, "new_line": None,
                    "line_range": None}
        codes = diff_lines(str(new_path), diff) if diff is not None else {}
        code = codes.get((old_line, new_line))
        if raw.get("position_type", "text") != "text" or code is None:
            raise GitLabError(400, _LINE_CODE_ERROR)
        line_range = raw.get("line_range")
        if line_range is not None:
            _check_range(line_range, codes, code)
        if line_range is None and not api:  # the web UI always sends a line_range
            kind = None if old_line and new_line else ("new" if new_line else "old")
            end = {"line_code": code, "type": kind, "old_line": old_line, "new_line": new_line}
            line_range = {"start": dict(end), "end": end}
        return {**where, "position_type": "text", "old_line": old_line,
                "new_line": new_line, "line_range": line_range}


def _check_range(line_range: object, codes: dict[tuple[int | None, int | None], str],
                 end_code: str) -> None:
    """`line_range` as gitlabhq app/validators/json_schemas/position.json stores it (start
    and end objects of line_code, type, integer-or-null old_line/new_line: anything else
    is "must be a valid json schema", gitlab-org/gitlab#520794), its end the position's
    own line. Stricter than GitLab, which renders whatever codes it is given: each code
    must name the line its numbers name in the diff, so a wrong one fails here first."""
    invalid = GitLabError(400, '400 Bad request - Note {:position=>["must be a valid json '
                          'schema"]}')
    if not isinstance(line_range, dict) or set(line_range) - {"start", "end"}:
        raise invalid
    for end in ("start", "end"):
        point = line_range.get(end)
        if not isinstance(point, dict) or set(point) - {"line_code", "type", "old_line",
                                                         "new_line"}:
            raise invalid
        lines = (point.get("old_line"), point.get("new_line"))
        if not isinstance(point.get("line_code"), str) or any(
                n is not None and (isinstance(n, bool) or not isinstance(n, int))
                for n in lines):
            raise invalid
        if codes.get(lines) != point["line_code"]:
            raise GitLabError(400, _LINE_CODE_ERROR)
    if line_range["end"]["line_code"] != end_code:
        raise GitLabError(400, _LINE_CODE_ERROR)
