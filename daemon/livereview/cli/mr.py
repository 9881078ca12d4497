"""`livereview mr <operation> …`: the MR tools for people and scripts (docs/DESIGN.md §13).

Parsing and rendering only: each operation is one call into `livereview.tools`. Text on a
terminal, `--json` for scripts; exit 2 for bad input (or a write the host does not allow
agents, or a comment already answered — by the daemon, or by another call, even one
posting right now), 1 when the host or the database fails; one line on stderr, never a
traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TextIO

from livereview.app.wiring import open_toolbox
from livereview.core.sanitize import clean, one_line
from livereview.settings.view import ToolSettings
from livereview.tools import results
from livereview.tools.errors import EXIT_USAGE, BadInput, ToolError
from livereview.tools.toolbox import Toolbox

# Each operation imports its own tools when it runs: `mr comments`, the one an agent calls in
# a loop, loads neither the diff nor the posting side (bench figure 17;
# tests/e2e/test_cli_imports.py pins it).

EXIT_OK = 0
MR_HELP = "the MR's web URL, or HOST:REPO!IID (e.g. gl:group/project!7)"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mr = sub.add_parser("mr", help="MR tools for agents and scripts: comments, reply, diff, …")
    mr.set_defaults(face=run)
    ops = mr.add_subparsers(dest="operation", required=True, metavar="OPERATION")

    def op(name: str, help_text: str, *, target: bool = True) -> argparse.ArgumentParser:
        parser = ops.add_parser(name, help=help_text)
        if target:
            parser.add_argument("mr", metavar="MR", help=MR_HELP)
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        return parser

    op("show", "the MR itself: title, description, branches, state, people, revisions")
    op("comments", "the MR's comments not yet answered").add_argument(
        "--include-replied", action="store_true",
        help="also the comments already answered, and the bot's own")
    reply = op("reply", "reply in a comment's thread (once; recorded as replied)")
    reply.add_argument("comment", help="the comment's id (see `comments`)")
    reply.add_argument("--body", required=True, help="the text (- reads it from stdin)")
    for name, help_text in (("diffstat", "files changed, with status and +/- counts"),
                            ("diff", "the unified diff, one file at a time")):
        parser = op(name, help_text)
        parser.add_argument("--path", action="append", default=[], metavar="GLOB",
                            help="only files matching (repeatable; * crosses /)")
        if name == "diff":
            parser.add_argument("--context", type=int, default=None, metavar="N",
                                help="lines of context (default: the host's diff)")
    file = op("file", "a file's content at the MR's head, base or a commit")
    file.add_argument("path")
    file.add_argument("--ref", default="head",
                      help="head (default), base, a commit SHA, or a branch or tag name")
    comment = op("comment", "a general comment, or one on a diff line, a range of lines "
                 "or a whole file")
    comment.add_argument("--body", required=True, help="the text (- reads it from stdin)")
    comment.add_argument("--path", help="file of an inline comment (alone: the whole file)")
    comment.add_argument("--line", metavar="N|FIRST-LAST",
                         help="line of an inline comment, or a range of one hunk (10-14)")
    comment.add_argument("--old", action="store_true",
                         help="--line numbers the old file (a removed line)")
    op("approve", "approve the MR")
    op("unapprove", "withdraw the bot's approval")
    op("request-changes", "request changes").add_argument(
        "--body", default="", help="why (- reads it from stdin)")
    history = op("replied", "the reply history (daemon and tools), oldest first",
                 target=False)
    history.add_argument("mr", metavar="MR", nargs="?",
                         help="with --comment: the MR the comment is on")
    history.add_argument("--comment", metavar="ID",
                         help="did anyone answer this one comment of MR? (see `comments`)")
    history.add_argument("--repo", help="only this repo path")
    history.add_argument("--since", help="only replies from this date or time on (ISO 8601)")


def _text(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


def _call(box: Toolbox, args: argparse.Namespace) -> Awaitable[results.Result]:
    operations: dict[str, Callable[[Toolbox, argparse.Namespace],
                                   Awaitable[results.Result]]] = {
        "show": _show, "comments": _comments_of, "reply": _reply, "file": _file,
        "comment": _comment, "approve": _approve, "unapprove": _unapprove,
        "request-changes": _request_changes, "replied": _replied,
    }
    return operations[args.operation](box, args)


def _show(box: Toolbox, args: argparse.Namespace) -> Awaitable[results.Result]:
    from livereview.tools import show

    return show.show(box, args.mr)


def _comments_of(box: Toolbox, args: argparse.Namespace) -> Awaitable[results.Result]:
    from livereview.tools import comments

    return comments.comments(box, args.mr, include_replied=args.include_replied)


def _reply(box: Toolbox, args: argparse.Namespace) -> Awaitable[results.Result]:
    from livereview.tools import writing

    return writing.reply(box, args.mr, args.comment, _text(args.body))


def _file(box: Toolbox, args: argparse.Namespace) -> Awaitable[results.Result]:
    from livereview.tools import diffs

    return diffs.file(box, args.mr, args.path, args.ref)


def _approve(box: Toolbox, args: argparse.Namespace) -> Awaitable[results.Result]:
    from livereview.tools import writing

    return writing.approve(box, args.mr)


def _unapprove(box: Toolbox, args: argparse.Namespace) -> Awaitable[results.Result]:
    from livereview.tools import writing

    return writing.unapprove(box, args.mr)


def _request_changes(box: Toolbox, args: argparse.Namespace) -> Awaitable[results.Result]:
    from livereview.tools import writing

    return writing.request_changes(box, args.mr, _text(args.body))


def _comment(box: Toolbox, args: argparse.Namespace) -> Awaitable[results.Result]:
    from livereview.tools import anchors, writing

    first, last = (None, None) if args.line is None else anchors.parse_lines(args.line)
    return writing.comment(box, args.mr, _text(args.body), args.path, first, args.old,
                           end_line=last)


def _replied(box: Toolbox, args: argparse.Namespace) -> Awaitable[results.Result]:
    from livereview.tools import comments

    if args.comment is None and args.mr is None:
        return comments.replied(box, repo=args.repo, since=args.since)
    if args.comment is None or args.mr is None or args.repo or args.since:
        raise BadInput("replied: give MR and --comment ID together (one comment), or neither "
                       "(the history, with --repo and --since)")
    return comments.comment_replied(box, args.mr, args.comment)


async def _diff(box: Toolbox, args: argparse.Namespace, out: TextIO) -> None:
    """Printed as each file arrives (memory bounded by one file), each under git's headers;
    `--json` writes the same document as the MCP tool (hunks only, paths beside), streamed."""
    from livereview.tools import diffs
    from livereview.tools.patch import as_patch

    key = await box.reached(args.mr)  # bad input is said before anything is written
    diffs.check_context(args.context)
    stream = diffs.diff_stream(box, args.mr, args.path, args.context)
    if not args.json:
        async for item in stream:  # a patch `git apply` takes (tools/patch.py)
            out.write(clean(as_patch(item)))
        return
    out.write(f'{{"mr": {json.dumps(str(key))}, "context": '
              f'{json.dumps(args.context)}, "files": [')
    first = True
    async for item in stream:
        out.write(("" if first else ", ") + json.dumps(results.as_json(item)))
        first = False
    out.write('], "omitted": [], "note": ""}\n')


async def _diffstat_live(box: Toolbox, args: argparse.Namespace, out: TextIO) -> None:
    """On a terminal each page of rows is printed as the host serves it, the totals
    last; `--json` is the one document, written when the list is complete."""
    from livereview.tools import diffs

    if args.json:
        result = await diffs.diffstat(box, args.mr, args.path)
        out.write(json.dumps(results.as_json(result), indent=2) + "\n")
        return
    key = await box.reached(args.mr)
    shown: list[results.FileStat] = []
    total = 0
    async for read, rows in diffs.diffstat_pages(box, key, args.path):
        total, page = read, [diffs.stat_row(c) for c in rows]
        if page:
            out.write(_stat_lines(page))
            out.flush()
        shown += page
    out.write(f"{len(shown)} of {total} files, +{sum(f.additions for f in shown)} "
              f"-{sum(f.deletions for f in shown)}\n")


async def _main(settings: ToolSettings, args: argparse.Namespace, out: TextIO) -> int:
    # The one line on stderr says a failure; one call, so the store may be read plainly.
    box = open_toolbox(settings, log_failures=False, plain_reads=True)
    try:
        if args.operation == "diff":
            await _diff(box, args, out)
            return EXIT_OK
        if args.operation == "diffstat":
            await _diffstat_live(box, args, out)
            return EXIT_OK
        result = await _call(box, args)
        if args.json:
            out.write(json.dumps(results.as_json(result), indent=2) + "\n")
        if isinstance(result, results.Posted) and result.already_answered:
            # Refused as before the race was closed (exit 2, one line); `--json` also
            # gets the document saying by whom, and the reply's id.
            print(f"livereview: mr {args.operation}: {result.note}", file=sys.stderr)
            return EXIT_USAGE
        if not args.json:
            out.write(render(result))
        return EXIT_OK
    finally:
        await box.close()


def run(settings: ToolSettings, args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main(settings, args, sys.stdout))
    except ToolError as exc:
        print(f"livereview: mr {args.operation}: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # stdout closed early (`| head`): cli.main ends quietly
        raise
    except OSError as exc:  # stdin unreadable
        print(f"livereview: mr {args.operation}: {exc}", file=sys.stderr)
        return EXIT_USAGE


# ---- text on a terminal (other people's text is cleaned of escapes first) ----------------
def _comments(result: results.Comments) -> str:
    left_out = result.left_out_replied + result.left_out_own
    lines = [f"{result.mr}: {result.returned} of {result.total} comments"
             + (f" ({result.left_out_replied} already replied, {result.left_out_own} the "
                "bot's own: left out; --include-replied shows them)" if left_out else "")]
    for c in result.comments:
        span = f"{c.start_line}-{c.line}" if c.start_line is not None else f"{c.line}"
        where = "" if not c.path else f" on {clean(c.path)} (the whole file)" \
            if c.whole_file else f" on {clean(c.path)}:{span}" + \
            (" (old)" if c.side == "old" else "")
        replied = f"  [replied by {c.replied_by}: #{c.reply_id}]" if c.replied else ""
        lines.append(f"#{c.id} @{clean(c.author)} ({c.author_kind}){where} "
                     f"thread {c.thread_id} {c.created_at}{replied}")
        lines += [f"    {line}" for line in clean(c.body).splitlines() or [""]]
    return "\n".join(lines) + "\n"


def _stat_lines(files: Sequence[results.FileStat]) -> str:
    marks = {"added": "A", "modified": "M", "removed": "D", "renamed": "R"}
    return "".join(f"{marks.get(f.status, '?')} {f'+{f.additions}':>7} {f'-{f.deletions}':>7}  "
                   + clean(f.path)
                   + (f" (from {clean(f.old_path)})" if f.status == "renamed" else "")
                   + (" (binary)" if f.binary else "") + "\n" for f in files)


def _diffstat(result: results.Diffstat) -> str:
    return _stat_lines(result.files) + (
        f"{len(result.files)} of {result.files_total} files, +{result.additions} "
        f"-{result.deletions}\n")


def _overview(result: results.Overview) -> str:
    """Every field of the host's is someone's text: cleaned of escapes, one line each."""
    def names(values: tuple[str, ...]) -> str:
        return ", ".join(one_line(v) for v in values) or "none"
    lines = [f"{result.mr}: {one_line(result.title)}",
             f"state:    {one_line(result.state)}" + (" (draft)" if result.draft else ""),
             f"author:   @{one_line(result.author)}",
             f"branches: {one_line(result.source_branch)} → {one_line(result.target_branch)}",
             f"head:     {one_line(result.head_sha)}", f"base:     {one_line(result.base_sha)}",
             f"reviewers: {names(result.reviewers)}",
             f"approved by: {names(result.approved_by)}",
             f"labels:   {names(result.labels)}", f"url:      {one_line(result.web_url)}"]
    if (head := result.head_commit) is not None:
        subject = one_line(head.message.split("\n", 1)[0])
        by = f" by {one_line(head.author)}" if head.author else ""
        lines.append(f"head commit: {one_line(head.sha)[:12]}{by}: {subject}")
    lines.append("")
    lines += [f"    {line}" for line in clean(result.description).splitlines()]
    return "\n".join(lines) + "\n"


def render(result: results.Result) -> str:
    if isinstance(result, results.Overview):
        return _overview(result)
    if isinstance(result, results.Comments):
        return _comments(result)
    if isinstance(result, results.Diffstat):
        return _diffstat(result)
    if isinstance(result, results.FileContent):
        kind = f", {result.mime}" if result.mime else ""
        if result.type == "binary":  # nothing on stdout: the bytes are not shown
            print(f"{clean(result.path)} at {one_line(result.sha[:40])}: a binary file"
                  f"{kind}", file=sys.stderr)
            return ""
        print(f"{clean(result.path)} at {one_line(result.sha[:40])} ({result.size} bytes, "
              f"{result.encoding}{kind})", file=sys.stderr)  # stdout: the file, to redirect
        return result.content
    if isinstance(result, results.Posted):
        return (f"adopted #{result.id} in thread {result.thread_id}: {result.note}\n"
                if result.adopted else f"posted #{result.id} in thread {result.thread_id}\n")
    if isinstance(result, results.Verdict):
        done = {"approve": "approved", "unapprove": "approval withdrawn",
                "request_changes": "changes requested"}[result.action]
        return f"{result.mr}: {done}\n"
    if isinstance(result, results.CommentReplied):
        bot = (f"replied by the bot ({result.replied_by}) with #{result.reply_id} at "
               f"{result.replied_at}" if result.replied else "not replied by the bot")
        people = (f"; later in its thread: {', '.join('#' + i for i in result.answers_in_thread)}"
                  if result.answers_in_thread else "")
        return f"{result.mr} #{result.comment_id}: {bot}{people}\n"
    if isinstance(result, results.Replied):
        rows = [f"{r.replied_at}  {r.host}:{r.repo}!{r.iid}  #{r.comment_id} → #{r.reply_id} "
                f"({r.source})" for r in result.replies]
        return "\n".join([*rows, f"{result.count} replies"]) + "\n"
    return clean(json.dumps(results.as_json(result), indent=2)) + "\n"
