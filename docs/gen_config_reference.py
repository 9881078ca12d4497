"""Writes docs/configuration.md from the settings models; `--check` only compares.

    python docs/gen_config_reference.py           # rewrite the page
    python docs/gen_config_reference.py --check   # exit 1 when the page is stale

The page is generated, never edited: a key's meaning is the docstring under its field in
the settings models (DESIGN §7), its type, default and bounds are the field's own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from livereview.settings.reference import UndocumentedKey, page

PAGE = Path(__file__).resolve().parent / "configuration.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if docs/configuration.md differs from a fresh generation")
    parser.add_argument("--page", type=Path, default=PAGE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    target: Path = args.page
    try:
        text = page()
    except UndocumentedKey as error:
        print(f"gen_config_reference: {error}", file=sys.stderr)
        return 1
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"{target} is stale: run python docs/gen_config_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
