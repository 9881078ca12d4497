"""The light reader's keys (settings/light_sections.py) are the models' keys: the same names,
defaults, required keys, bounds, choices, lengths and rules. A setting added to a model or
changed in one without teaching the light reader fails here; a key the light reader leaves
to the models is named in its REFUSED list (docs/getting-started.md, "A CLI for loops")."""

from __future__ import annotations

import typing
from dataclasses import Field, fields

import pytest
from pydantic import AfterValidator, BaseModel
from pydantic.fields import FieldInfo

from livereview.settings import (
    AISettings,
    AnswerSettings,
    BotSettings,
    DaemonSettings,
    HostSettings,
    LessonsSettings,
    RepoSettings,
    ReviewSettings,
    Settings,
)
from livereview.settings.checks import AtMost, Between, OneOf
from livereview.settings.hosts import TokenSettings
from livereview.settings.light import LightSettings, spec
from livereview.settings.light_keys import WhenText
from livereview.settings.light_sections import (
    REFUSED,
    LightAI,
    LightAnswers,
    LightBot,
    LightDaemon,
    LightHost,
    LightLessons,
    LightRepo,
    LightReview,
    LightToken,
    LightWeb,
)
from livereview.settings.web import WebSettings

PAIRS: list[tuple[type[object], type[BaseModel]]] = [
    (LightDaemon, DaemonSettings), (LightBot, BotSettings), (LightAI, AISettings),
    (LightLessons, LessonsSettings), (LightAnswers, AnswerSettings), (LightHost, HostSettings),
    (LightToken, TokenSettings), (LightRepo, RepoSettings), (LightReview, ReviewSettings),
    (LightWeb, WebSettings)]
# Set by the light reader itself, as the models derive them: secrets, and a host's token
# tables (each read with its secret).
READER_SET = {"LightHost": {"token", "tokens"}, "LightToken": {"token"}, "LightAI": {"api_key"},
              "LightWeb": {"token"}}


def _model_rules(info: FieldInfo) -> list[object]:
    """Every rule on a model's field: its metadata, and the metadata of the Annotated types
    inside its annotation (`Annotated[Required, at_most(64)] | None`)."""
    found: list[object] = list(info.metadata)
    todo: list[object] = [info.annotation]
    while todo:
        annotation = todo.pop()
        if typing.get_origin(annotation) is typing.Annotated:
            found += list(getattr(annotation, "__metadata__", ()))
        todo += list(typing.get_args(annotation))
    rules: list[object] = []
    for item in found:
        if isinstance(item, AfterValidator):
            rules.append(item.func)
        elif isinstance(item, Between | OneOf | AtMost):
            rules.append(item)
    return rules


def _light_rules(field: Field[object]) -> list[object]:
    rules: list[object] = []
    todo = list(spec(field).rules)
    while todo:
        rule = todo.pop()
        if isinstance(rule, WhenText):
            todo += list(rule.rules)
            continue
        owner = getattr(rule, "__self__", None)  # Between(…).check → Between(…)
        rules.append(owner if isinstance(owner, Between | OneOf | AtMost) else rule)
    return rules


@pytest.mark.parametrize(("light", "model"), PAIRS, ids=[m.__name__ for _, m in PAIRS])
def test_each_light_section_has_the_models_keys_defaults_and_rules(
        light: type[object], model: type[BaseModel]) -> None:
    mine = {f.name: f for f in fields(light)}  # type: ignore[arg-type]
    refused = REFUSED.get(light.__name__, frozenset())
    assert set(mine) | refused == set(model.model_fields)
    assert not set(mine) & refused
    set_by_reader = {name for name, f in mine.items() if spec(f).derived}
    assert set_by_reader == READER_SET.get(light.__name__, set())
    assert set(getattr(model, "derived", {})) <= set_by_reader
    for name, field in mine.items():
        info = model.model_fields[name]
        if name in set_by_reader:
            continue
        assert spec(field).required == info.is_required(), name
        if not info.is_required():
            assert field.default == info.default, name
            assert type(field.default) is type(info.default), name
        light_rules = _light_rules(field)
        for rule in _model_rules(info):
            assert rule in light_rules, f"{model.__name__}.{name}: {rule!r} not applied"
        for rule in light_rules:
            if isinstance(rule, Between | OneOf | AtMost):
                assert rule in _model_rules(info), f"{light.__name__}.{name}: {rule!r}"


def test_the_light_settings_hold_the_models_sections_or_leave_the_file_to_them() -> None:
    mine = {f.name for f in fields(LightSettings)}
    assert mine | REFUSED["LightSettings"] == set(Settings.model_fields)


# The decorated validators of each model the light reader covers, and where the light reader
# applies the same rule (the models' validators call these functions too). A validator added
# to one of these models fails here until the light reader applies it (or refuses its key).
MIRRORED: dict[str, dict[str, str]] = {
    "DaemonSettings": {"_consistent": "section_rules.daemon_consistent",
                       "_database_url": "checks.database_url / default_database_url",
                       "_metrics_listen": "the key's rule in light_sections.LightDaemon",
                       "_no_derived_keys": "light.section: derived keys are unproven"},
    "BotSettings": {"_no_derived_keys": "light.section"},
    "AISettings": {"_no_derived_keys": "light.section", "_read_key": "section_rules.ai_key"},
    "LessonsSettings": {"_no_derived_keys": "light.section"},
    "AnswerSettings": {"_no_derived_keys": "light.section"},
    "HostSettings": {"_bitbucket_cloud_auth": "host_rules.bitbucket_cloud_auth",
                     "_ca_bundle": "the key's rule (host_rules.ca_bundle)",
                     "_login": "the key's rule (host_rules.login)",
                     "_no_derived_keys": "light.section",
                     "_read_token": "secret.resolve in light._host",
                     "_tokens_where_routed": "host_rules.tokens_where_routed",
                     "_url": "host_rules.host_url",
                     "_username": "the key's rule (host_rules.username)"},
    "TokenSettings": {"_no_derived_keys": "light.section",
                      "_read_token": "secret.resolve in light._token"},
    "RepoSettings": {"_no_derived_keys": "light.section"},
    "ReviewSettings": {"_no_derived_keys": "light.section"},
    "WebSettings": {"_no_derived_keys": "light.section: derived keys are unproven",
                    "_read_token": "section_rules.web_token in light._web"},
    "Settings": {"_no_derived_keys": "light.KNOWN", "_references": "section_rules.references",
                 "_sections_default": "light._read: a missing section is read as {}"},
}


@pytest.mark.parametrize("model", [m for _light, m in PAIRS] + [Settings],
                         ids=lambda m: m.__name__)
def test_every_decorated_validator_of_a_covered_model_is_one_the_light_reader_applies(
        model: type[BaseModel]) -> None:
    """Review s6: the key-by-key comparison above sees the rules in a key's annotation, not
    those of `@field_validator` and `@model_validator`; a new one would have let the light
    reader take what the models refuse."""
    decorators = model.__pydantic_decorators__
    found = {getattr(d.func, "__name__", repr(d.func)) for group in (
        decorators.field_validators, decorators.model_validators, decorators.validators,
        decorators.root_validators) for d in group.values()}
    assert found == set(MIRRORED[model.__name__])
