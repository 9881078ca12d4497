"""The fake GitLab's merge request approvals, per user, as GitLab answers them.

lib/api/merge_request_approvals.rb (CE): POST …/approve answers 201 with the approval state
(a second approval by the same user: 401, https://gitlab.com/gitlab-org/gitlab/-/issues/
526532; a `sha` that is not the head: 409), POST …/unapprove 201, or 404 when the user had
not approved; GET …/approvals lists `approved_by`. https://docs.gitlab.com/api/
merge_request_approvals/

And the project setting that makes threads block a merge: PUT /projects/:id with
`only_allow_merge_if_all_discussions_are_resolved` (https://docs.gitlab.com/api/projects/
#edit-a-project); the MR then reports `blocking_discussions_resolved`.
"""

from __future__ import annotations

from typing import Any

from livereview.sandbox.gitlab.model import JSON, GitLabError, MergeRequest, iso
from livereview.sandbox.gitlab.payloads import GitLabPayloads
from livereview.sandbox.loopback import locked


class GitLabReviews(GitLabPayloads):

    @locked
    def edit_project(self, project: str, settings: dict[str, Any]) -> JSON:
        """PUT /projects/:id: the merge-check setting is kept; other attributes are
        accepted and ignored, as a fake that models only what the bot depends on."""
        p = self.find_project(project)
        key = "only_allow_merge_if_all_discussions_are_resolved"
        if key in settings:
            p.only_allow_merge_if_all_discussions_are_resolved = (
                str(settings[key]).lower() in {"true", "1"})
        return self.project_json(p)

    def approval_json(self, mr: MergeRequest) -> JSON:
        return {
            "id": mr.id, "iid": mr.iid, "project_id": mr.project.id, "title": mr.title,
            "description": mr.description, "state": mr.state,
            "created_at": iso(mr.created_at), "updated_at": iso(mr.updated_at),
            "merge_status": "can_be_merged", "approved": bool(mr.approved_by),
            "approvals_required": 0, "approvals_left": 0, "require_password_to_approve": False,
            "approved_by": [{"user": self.user_json(u)} for u in mr.approved_by],
            "suggested_approvers": [], "approvers": [], "approver_groups": [],
            "user_has_approved": False, "user_can_approve": True, "approval_rules_left": [],
            "has_approval_rules": False, "merge_request_approvers_available": False,
            "multiple_approval_rules_available": False, "invalid_approvers_rules": []}

    @locked
    def approve(self, project: str, iid: int, *, user: str, sha: str | None = None) -> JSON:
        mr, who = self.find_mr(project, iid), self.users[user]
        if sha and sha != mr.head_sha:
            raise GitLabError(409, "SHA does not match HEAD of source branch: " + mr.head_sha)
        if who in mr.approved_by:
            raise GitLabError(401, "401 Unauthorized")
        mr.approved_by.append(who)
        return self.approval_json(mr)

    @locked
    def unapprove(self, project: str, iid: int, *, user: str) -> JSON:
        mr, who = self.find_mr(project, iid), self.users[user]
        if who not in mr.approved_by:
            raise GitLabError(404, "404 Not found")
        mr.approved_by.remove(who)
        return self.approval_json(mr)

    @locked
    def approvals(self, project: str, iid: int) -> JSON:
        return self.approval_json(self.find_mr(project, iid))

    @locked
    def approvers(self, project: str, iid: int) -> list[str]:
        """Who approves the MR now (for tests)."""
        return [u.username for u in self.find_mr(project, iid).approved_by]
