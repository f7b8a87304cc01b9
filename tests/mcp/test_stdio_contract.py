"""The MCP contract over stdio, against the real ``rypsok serve`` process.

REQ-MCP-001/002/004/005/006/008/009/010/011, REQ-ERR-001..003, REQ-TEST-009.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from rypsok.config.limits import limit
from tests.support import rypsok_client, write_config

pytestmark = pytest.mark.anyio
ERAS = ["legacy", "2026-07-28"]


def _structured(result: Any) -> dict[str, Any]:
    assert result.structured_content is not None
    data: dict[str, Any] = result.structured_content
    # REQ-MCP-011, REQ-CTX-002, REQ-CTX-003: one structured object, and the text block
    # carries the same response serialized as JSON.
    assert json.loads(result.content[0].text) == data
    return data


@pytest.mark.parametrize("mode", ERAS)
async def test_req_mcp_005_009_tool_list_order_and_annotations(mode: str) -> None:
    """REQ-MCP-005, REQ-MCP-009, REQ-MCP-006: exactly three tools, fixed order, annotations,
    in the handshake era and the stateless 2026-07-28 revision alike."""
    async with rypsok_client(mode=mode) as client:
        first = (await client.list_tools()).tools
        second = (await client.list_tools()).tools
    assert [t.name for t in first] == ["web_search", "web_fetch", "engine_status"]
    assert [t.model_dump() for t in first] == [t.model_dump() for t in second]
    for tool in first:
        a = tool.annotations
        assert a is not None
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint) == (True, False, True)
        assert a.open_world_hint is (tool.name != "engine_status")
        assert tool.output_schema is not None  # REQ-MCP-011


async def test_req_mcp_008_definitions_within_budget() -> None:
    """REQ-MCP-008, REQ-TEST-009: definitions plus instructions within LIM-I1; at most LIM-I2
    parameters; flat objects of primitives and enums (LIM-I3); defaults stated (CLR-9)."""
    async with rypsok_client(mode="legacy") as client:
        tools = (await client.list_tools()).tools
        instructions = client.instructions or ""
    serialized = sum(
        len(t.name) + len(t.description or "") + len(json.dumps(t.input_schema)) for t in tools
    )
    assert serialized + len(instructions) <= limit("LIM-I1")
    for tool in tools:
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert len(schema["properties"]) <= limit("LIM-I2")
        for name, prop in schema["properties"].items():
            assert prop["type"] in ("string", "integer", "boolean"), name
            if name not in schema.get("required", []) and name not in ("time_range", "focus"):
                assert "default" in prop, f"{tool.name}.{name} states no default"


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("arguments", "parameter", "detail_key"),
    [
        ({}, "query", None),
        ({"query": "   "}, "query", "maximum"),
        ({"query": "x" * 401}, "query", "maximum"),
        ({"query": 42}, "query", None),
        ({"query": "ok", "category": "images"}, "category", "valid_values"),
        ({"query": "ok", "max_results": 21}, "max_results", "maximum"),
        ({"query": "ok", "max_results": True}, "max_results", None),
        ({"query": "ok", "time_range": "decade"}, "time_range", "valid_values"),
        ({"query": "ok", "language": "xx"}, "language", "valid_values"),
        ({"query": "ok", "colour": "red"}, "arguments", "valid_values"),
        ({"query": "a\u0000b"}, "query", "position"),
    ],
)
async def test_req_mcp_004_invalid_arguments_are_tool_errors(
    mode: str, arguments: dict[str, Any], parameter: str, detail_key: str | None
) -> None:
    """REQ-MCP-004, REQ-ERR-003, REQ-SEARCH-001..005: invalid arguments are tool execution
    errors of kind invalid_request naming the parameter, the valid values or the ceiling."""
    async with rypsok_client(mode=mode) as client:
        result = await client.call_tool("web_search", arguments)
    assert result.is_error is True
    data = _structured(result)
    assert data["outcome"] == "error"
    error = data["error"]
    assert error["kind"] == "invalid_request"
    assert error["detail"]["parameter"] == parameter
    assert len(error["message"]) <= limit("LIM-I4")
    if detail_key:
        assert detail_key in error["detail"]


async def test_req_search_003_ceiling_stated() -> None:
    """REQ-SEARCH-003, CLR-3: a value above the ceiling is refused stating the range."""
    async with rypsok_client() as client:
        result = await client.call_tool("web_search", {"query": "ok", "max_results": 99})
    error = _structured(result)["error"]
    assert error["detail"]["maximum"] == limit("LIM-S2-MAX")
    assert "20" in error["message"]


async def test_req_err_003_unknown_tool_is_a_protocol_error() -> None:
    """REQ-ERR-003: an unknown tool is the one case answered with a protocol error."""
    async with rypsok_client(mode="legacy") as client:
        with pytest.raises(MCPError):
            await client.call_tool("web_crawl", {"query": "x"})
        # The session keeps serving after it.
        assert len((await client.list_tools()).tools) == 3


async def test_req_mcp_010_invocation_rate_limit(tmp_path: Path) -> None:
    """REQ-MCP-010, REQ-TEST-016: calls beyond the per-minute limit are refused with
    unavailable and a retry_after_ms."""
    config = write_config(tmp_path, "[service]\ncalls_per_minute_engine_status = 2\n")
    async with rypsok_client(config) as client:
        outcomes = [await client.call_tool("engine_status", {}) for _ in range(3)]
    assert [r.is_error for r in outcomes] == [False, False, True]
    error = _structured(outcomes[2])["error"]
    assert (error["kind"], error["reason"]) == ("unavailable", "rate_limited")
    assert 0 < error["detail"]["retry_after_ms"] <= 60_000


async def test_req_status_003_engine_status_can_be_switched_off(tmp_path: Path) -> None:
    """REQ-STATUS-003: with engine_status off the tool is not listed."""
    config = write_config(tmp_path, "[service]\nengine_status = false\n")
    async with rypsok_client(config, mode="legacy") as client:
        names = [t.name for t in (await client.list_tools()).tools]
        with pytest.raises(MCPError):
            await client.call_tool("engine_status", {})
    assert names == ["web_search", "web_fetch"]


async def test_req_mcp_011_structured_content_can_be_switched_off(tmp_path: Path) -> None:
    """REQ-MCP-011: the operator may switch structured content off; the JSON text remains."""
    config = write_config(tmp_path, "[service]\nstructured_content = false\n")
    async with rypsok_client(config, mode="legacy") as client:
        result = await client.call_tool("web_search", {"query": ""})
    assert result.structured_content is None
    assert json.loads(result.content[0].text)["error"]["kind"] == "invalid_request"


async def test_req_mcp_007_cancellation_aborts_outbound_work(tmp_path: Path) -> None:
    """REQ-MCP-007, REQ-AGG-006, REQ-TEST-009: notifications/cancelled aborts the call's
    in-flight engine request (the engine sees its connection closed) and the session keeps
    serving."""
    import anyio

    from tests.fakes.http_server import Reply, fake_http_server

    with fake_http_server() as server:
        server.replies["/hn"] = Reply(hang=True)
        engines = "".join(
            f"[engines.{e}]\nenabled = false\n"
            for e in (
                "wikipedia",
                "wikidata",
                "gdelt",
                "arxiv",
                "crossref",
                "europepmc",
                "github",
                "stackexchange",
            )
        )
        config = write_config(
            tmp_path, f'[engines.hackernews]\nendpoint = "{server.url("/hn")}"\n' + engines
        )
        async with rypsok_client(config, mode="legacy") as client:
            with anyio.move_on_after(1.0) as scope:
                await client.call_tool("web_search", {"query": "rust", "category": "news"})
            assert scope.cancelled_caught
            with anyio.fail_after(5):  # generous: LIM-O2 is 100 ms plus process scheduling
                while server.closed_hanging == 0:
                    await anyio.sleep(0.02)
            assert len((await client.list_tools()).tools) == 3
    assert len(server.requests) == 1  # no retry after the cancellation
