"""`[web]`: who may use `livereview web`'s pages when they are served beyond loopback
(DESIGN §11 "The web face"). On 127.0.0.1 nothing is needed; on any other address a token
or a trusted reverse proxy's header is, or the command refuses to start."""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Self

from pydantic import AfterValidator, ValidationInfo, model_validator

from livereview.settings.errors import Invalid
from livereview.settings.secret import Secret, resolve
from livereview.settings.section import Section, reading_of

MIN_TOKEN_CHARS = 16  # a sign-in token is guessed online: short ones are refused
_HEADER = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")


def _header_name(value: str) -> str:
    if value and not _HEADER.fullmatch(value):
        raise Invalid(f"{value!r} is not an HTTP header name")
    return value


def usable_token(token: str, where: str) -> str:
    if len(token) < MIN_TOKEN_CHARS:
        raise Invalid(f"the token in {where} must be at least {MIN_TOKEN_CHARS} characters",
                      "token_file")
    return token


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
    trusted_header: Annotated[str, AfterValidator(_header_name)] = ""
    """Behind a reverse proxy that authenticates people: the request header it sets to the
    user's name (e.g. `X-Forwarded-User`); a request without it is refused. The proxy must
    drop the header from what clients send."""
    token: Secret = Secret("")

    @model_validator(mode="after")
    def _read_token(self, info: ValidationInfo) -> Self:
        reading = reading_of(info)
        if reading is None or not self.token_file:
            return self
        token = resolve("token", "", self.token_file, both_set=False, required=False,
                        reading=reading)
        if token:
            usable_token(token.reveal(), self.token_file)
        return self.model_copy(update={"token": token})
