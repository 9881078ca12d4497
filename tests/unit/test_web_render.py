"""The web face's rendering of hostile text: Markdown without raw HTML, links only http(s),
no images, no invisible or bidi-override characters; the description's JSON as lists; a
diff's rows numbered as git numbers them."""

from __future__ import annotations

import difflib
import html
import re

from hypothesis import given
from hypothesis import strategies as st

from livereview.web import render


def test_raw_html_in_a_comment_is_shown_as_text() -> None:
    out = render.markdown('<script>alert(1)</script> <img src=x onerror="alert(1)">')
    assert "<script" not in out and "<img" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out


def test_only_http_and_https_links_become_links() -> None:
    out = render.markdown("[a](javascript:alert(1)) [b](data:text/html,x) [c](https://ok.test/p)"
                          " [d](HTTP://ok.test) [e](/relative) [f](vbscript:x)")
    assert re.findall(r'href="([^"]*)"', out) == ["https://ok.test/p", "HTTP://ok.test"]
    assert 'rel="nofollow noopener noreferrer"' in out


def test_an_image_is_not_loaded_from_anywhere() -> None:
    assert "<img" not in render.markdown("![pixel](https://tracker.test/p.png)")


def test_bidi_overrides_and_zero_width_characters_are_dropped_from_every_field() -> None:
    assert render.text("evil\u202etxt.exe\u200b") == "eviltxt.exe"
    assert "\u2066" not in render.markdown("a\u2066b")


def test_the_bot_s_marker_for_the_host_is_not_shown() -> None:
    assert "livereview:" not in render.markdown("An answer.\n\n<!-- livereview:ack:7 -->\n")


def test_the_description_s_json_is_nested_lists_with_every_key_and_value_escaped() -> None:
    out = render.description('{"<b>k</b>": ["<i>v</i>", 2, null, {"deep": true}]}')
    assert "<b>" not in out and "<i>" not in out
    assert "&lt;b&gt;k&lt;/b&gt;" in out and "<code>2</code>" in out
    assert "<code>null</code>" in out and "<code>true</code>" in out
    assert render.description("not json <b>") == "<p>not json &lt;b&gt;</p>"


def _shown(code: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", code))


lines = st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Zl", "Zp")),
                         max_size=12), max_size=12)


@given(old=lines, new=lines)
def test_each_diff_row_shows_the_line_git_numbers_it_with(old: list[str],
                                                            new: list[str]) -> None:
    diff = "\n".join(difflib.unified_diff(old, new, "a/f.txt", "b/f.txt", lineterm="", n=2))
    rows = render.diff_rows("diff --git a/f.txt b/f.txt\n" + diff + "\n", "f.txt")
    for row in rows:
        if row.kind in ("add", "context"):
            assert row.new is not None and _shown(row.code) == render.text(new[row.new - 1])
        if row.kind in ("del", "context"):
            assert row.old is not None and _shown(row.code) == render.text(old[row.old - 1])
    shown_new = {r.new for r in rows if r.new is not None}
    changed = {i + 1 for op in difflib.SequenceMatcher(a=old, b=new).get_opcodes()
               if op[0] in ("replace", "insert") for i in range(op[3], op[4])}
    assert changed <= shown_new


def test_a_line_holding_a_form_feed_or_line_separator_is_one_row() -> None:
    diff = "@@ -1,1 +1,2 @@\n a\n+b\u2028c\x0cd\n"
    rows = render.diff_rows(diff, "f.py")
    assert [(r.kind, r.new) for r in rows] == [("hunk", None), ("context", 1), ("add", 2)]
