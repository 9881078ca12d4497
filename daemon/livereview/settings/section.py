"""The base of every settings section: a frozen, strict pydantic model that refuses unknown
keys, and knows whether it is being read from a file (`Reading`) or built in code."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

from livereview.settings.errors import Invalid, Rank
from livereview.settings.secret import Reading


def reading_of(info: ValidationInfo) -> Reading | None:
    return info.context if isinstance(info.context, Reading) else None


class Section(BaseModel):
    # Defaults are validated too: a default outside its own bounds is a bug caught at once.
    # Each key's meaning is the docstring under its field: the configuration reference
    # (docs/configuration.md) is generated from it by settings/reference.py, which reads the
    # docstrings itself. Not pydantic's `use_attribute_docstrings`: that parses each model's
    # source on every load of a config, a fifth of a read-only command's start-up
    # (docs/getting-started.md, "A CLI for loops").
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False,
                              validate_default=True)
    # Attributes computed while reading (key → what to write in the file instead).
    derived: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _no_derived_keys(cls, data: object, info: ValidationInfo) -> object:
        if reading_of(info) and isinstance(data, dict):
            for key, instead in cls.derived.items():
                if key in data:
                    raise Invalid(f"unknown key ({instead})", key, rank=Rank.UNKNOWN)
        return data
