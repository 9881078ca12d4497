"""`[web]`: who may use `livereview web`'s pages when they are served beyond loopback
(DESIGN §11 "The web face"). On 127.0.0.1 nothing is needed; on any other address a token
or a trusted reverse proxy's header is, or the command refuses to start."""

from __future__ import annotations

from typing import Annotated, ClassVar, Self

from pydantic import AfterValidator, ValidationInfo, model_validator

from livereview.settings.secret import Secret
from livereview.settings.section import Section, reading_of
from livereview.settings.section_rules import MIN_TOKEN_CHARS, header_name, usable_token, web_token

__all__ = ["MIN_TOKEN_CHARS", "WebSettings", "usable_token"]


class WebSettings(Section):
    derived: ClassVar[dict[str, str]] = {"token": "set token_file"}
    listen: str = ""
    """`run` serves the web face here too (`HOST:PORT`, e.g. `127.0.0.1:8470`), so a systemd
    deployment needs no second unit; empty (the default): `run` serves no page. A
    non-loopback address needs `token_file` or `trusted_header`, or `run` refuses to start."""
    token_file: str = ""
    """A file holding the token a browser signs in with (at least 16 characters), or a
    script sends as `Authorization: Bearer`; a relative path is read from
    `$CREDENTIALS_DIRECTORY`. `livereview web --token-file` overrides it."""
    trusted_header: Annotated[str, AfterValidator(header_name)] = ""
    """Behind a reverse proxy that authenticates people: the request header it sets to the
    user's name (e.g. `X-Forwarded-User`); a request without it is refused. The proxy must
    drop the header from what clients send."""
    token: Secret = Secret("")

    @model_validator(mode="after")
    def _read_token(self, info: ValidationInfo) -> Self:
        reading = reading_of(info)
        if reading is None or not self.token_file:
            return self
        # The rule is the light reader's too (settings/section_rules.py).
        return self.model_copy(update={"token": web_token(self.token_file, reading)})
