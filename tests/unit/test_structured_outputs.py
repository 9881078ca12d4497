"""Structured outputs over an OpenAI-compatible endpoint: the schema asked for where the
server takes it, the instructed format where it refuses it — found out once, remembered
for the process — against the sandbox's model server, which refuses it as OpenAI does."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from structlog.testing import capture_logs

from livereview.core.model import FileChange, FileStatus
from livereview.core.prompt import OutputSchema, Prompt
from livereview.jobs.llm import LLMError, OpenAIAnswerer, SchemaSupport
from livereview.metrics import Metrics
from livereview.reply.context import ANSWER_SCHEMA
from livereview.review import prompt as review_prompt
from livereview.sandbox.llm_server import FakeLLMServer, LLMFault
from livereview.settings import AISettings
from tests import factories

SCHEMA = OutputSchema("answer", ANSWER_SCHEMA.schema)
QUESTION = ("## The thread\n### THE MESSAGE TO ANSWER — @bob\n<untrusted-f>\nWhy a lock?\n"
            "</untrusted-f>")


JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def fits(value: object, schema: dict[str, object]) -> bool:
    """`value` has the shape of `schema`, for the keywords a strict structured-outputs
    schema uses (type, enum, properties, required, additionalProperties, items, anyOf)."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        return any(fits(value, option) for option in options)
    kind = schema.get("type")
    if kind in ("number", "integer"):
        ok = isinstance(value, int | float) and not isinstance(value, bool) and (
            kind == "number" or isinstance(value, int))
    else:
        ok = isinstance(value, JSON_TYPES[str(kind)])
    enum = schema.get("enum")
    if not ok or (isinstance(enum, list) and value not in enum):
        return False
    properties = schema.get("properties")
    if isinstance(value, dict) and isinstance(properties, dict):
        required = schema.get("required")
        if set(value) != set(properties) or not isinstance(required, list) \
                or set(value) != set(required):
            return False  # strict: every property present, no other
        return all(fits(value[k], properties[k]) for k in value)
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        return all(fits(item, items) for item in value)
    return True


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


def answerer(server: FakeLLMServer, schemas: SchemaSupport | None = None) -> OpenAIAnswerer:
    return OpenAIAnswerer(AISettings(base_url=server.url, model="m", timeout_seconds=5.0),
                          Metrics(), schemas=schemas)


def asked(user: str = QUESTION) -> Prompt:
    return Prompt(system="You answer questions.", user=user, schema=SCHEMA)


async def test_a_server_that_takes_the_schema_is_sent_it_strict_and_answers_to_it(
        server: FakeLLMServer) -> None:
    client = answerer(server)
    try:
        answer = await client.answer(asked())
    finally:
        await client.close()
    [sent] = server.llm.response_formats
    assert sent is not None and sent["type"] == "json_schema"
    assert sent["json_schema"]["strict"] is True and sent["json_schema"]["name"] == "answer"
    assert answer.structured
    assert fits(json.loads(answer.text), json.loads(ANSWER_SCHEMA.schema))
    assert json.loads(answer.text)["mode"] == "clarification"


async def test_the_review_prompt_asks_for_findings_the_fake_answers_to_the_schema(
        server: FakeLLMServer) -> None:
    server.llm.invent_findings = True
    change = FileChange("a.py", "a.py", FileStatus.MODIFIED, 1, 0)
    built = review_prompt.build(factories.mr(), [(change, "@@ -1 +1,2 @@\n x\n+y\n")])
    client = answerer(server)
    try:
        answer = await client.answer(built)
    finally:
        await client.close()
    value = json.loads(answer.text)
    assert fits(value, json.loads(review_prompt.FINDINGS_SCHEMA.schema))
    assert [f["line"] for f in value["findings"]] == [2]


async def test_a_refusal_falls_back_to_the_instructed_format_once_for_the_process(
        server: FakeLLMServer) -> None:
    server.llm.structured_outputs = False
    support = SchemaSupport()
    client = answerer(server, support)
    try:
        with capture_logs() as logs:
            answers = [await client.answer(asked()) for _ in range(3)]
        again = answerer(server, support)  # another client of the same process
        answers.append(await again.answer(asked()))
        await again.close()
    finally:
        await client.close()
    formats = server.llm.response_formats
    assert [f is not None for f in formats] == [True, False, False, False, False]
    assert not any(a.structured for a in answers)
    assert all("sandbox answer engine" in a.text for a in answers)
    assert [e["event"] for e in logs].count("llm_structured_outputs_unsupported") == 1
    assert support.known == {server.url: False}


async def test_another_bad_request_is_an_error_not_a_refusal_of_the_schema(
        server: FakeLLMServer) -> None:
    server.llm.faults.append(LLMFault(status=400, message="context length exceeded"))
    support = SchemaSupport()
    client = answerer(server, support)
    try:
        with pytest.raises(LLMError, match="HTTP 400"):
            await client.answer(asked())
    finally:
        await client.close()
    assert server.url not in support.known  # asked again with the schema next time


async def test_a_prompt_without_a_schema_is_sent_none(server: FakeLLMServer) -> None:
    client = answerer(server)
    try:
        answer = await client.answer(Prompt(system="s", user="u"))
    finally:
        await client.close()
    assert server.llm.response_formats == [None] and not answer.structured


def test_asking_again_names_the_parse_error_and_keeps_the_schema() -> None:
    again = asked().again("the answer is not JSON")
    assert again.user.endswith("Your previous answer could not be read: the answer is not "
                               "JSON. Answer again with the JSON object only.")
    assert again.schema == SCHEMA and again.system == asked().system
