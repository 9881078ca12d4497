"""`livereview web`: local reviews in the browser (DESIGN §11 "The web face").

A Starlette app: `app.create_app` wires the routes (`pages` read, `actions` write through
tools/local_review.py — a click is exactly a `livereview review …` — and `events` streams a
review's changes); `guard` is the security of every request; `render` turns hostile text
into escaped HTML. Starlette, Jinja2 and Pygments are imported only here, so the rest of the
command line stays light.
"""
