"""Smoke test of `objectstack-ai serve` with the official MCP Python SDK
(`pip install mcp`): a client nobody here wrote, over stdio and over
Streamable HTTP, in front of a small fake ObjectStack server (127.0.0.1)
that records what it receives. Four scenarios: calls, validation, the
queue and the model's lookup on each transport; then `--confirm elicit`
over stdio (2025-11-25, `elicitation/create`) and with the SDK's
high-level `Client` over HTTP (2026-07-28, `input_required`).

Usage: python3 smoke.py PATH/TO/objectstack-ai PATH/TO/helpdesk.json
Exit code 0 when every check holds; a traceback otherwise.
"""

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import mcp.types as mcp_types
from mcp import ClientSession, StdioServerParameters
from mcp.client import Client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

BINARY, STACK = sys.argv[1], sys.argv[2]
KEY = "osk_python_smoke_0123"
RECEIVED = []


class FakeObjectStack(BaseHTTPRequestHandler):
    """The REST contract the gateway uses, as ObjectStack 17.4.0 answers it."""

    def _answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self):
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"null")
        RECEIVED.append(
            {"method": self.command, "path": self.path, "auth": self.headers.get("authorization"), "body": body}
        )
        return body

    def do_GET(self):
        self._record()
        parts = self.path.split("/")
        if self.path.startswith("/api/v1/data/support_ticket/") and parts[-1] == "t1":
            self._answer(200, {"object": "support_ticket", "id": "t1", "record": {"id": "t1", "subject": "x"}})
        else:
            self._answer(404, {"error": "Record not found", "code": "RECORD_NOT_FOUND"})

    def do_POST(self):
        body = self._record()
        if self.path == "/api/v1/actions/support_ticket/ticket_stats":
            self._answer(200, {"success": True, "data": {"total": 3, "byStatus": {"open": 2}}})
        else:
            self._answer(200, {"success": True, "data": {"params": (body or {}).get("params")}})

    def log_message(self, *args):
        pass


def start_fake():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeObjectStack)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def exercise(session):
    await session.initialize()
    names = [t.name for t in (await session.list_tools()).tools]
    assert "action_ticket_stats" in names and "action_escalate_ticket" in names, names
    RECEIVED.clear()
    stats = await session.call_tool("action_ticket_stats", {})
    assert not stats.is_error, stats
    assert stats.structured_content == {"total": 3, "byStatus": {"open": 2}}, stats.structured_content
    assert json.loads(stats.content[0].text) == stats.structured_content, stats.content
    done = await session.call_tool("action_escalate_ticket", {"recordId": "t1", "reason": "python"})
    assert not done.is_error, done
    posts = [r for r in RECEIVED if r["method"] == "POST"]
    assert posts[-1]["body"] == {"params": {"reason": "python"}}, posts
    assert all(r["auth"] == f"Bearer {KEY}" for r in RECEIVED), RECEIVED
    RECEIVED.clear()
    bad = await session.call_tool("action_escalate_ticket", {"recordId": "t1"})
    assert bad.is_error, bad
    assert RECEIVED == [], RECEIVED


def purges():
    return [r for r in RECEIVED if r["method"] == "POST" and "purge_ticket" in r["path"]]


async def queued(session):
    """Without elicitation a destructive call is parked, and the model's
    read-only lookup finds it."""
    RECEIVED.clear()
    parked = await session.call_tool("action_purge_ticket", {"recordId": "t1"})
    assert not parked.is_error, parked
    envelope = json.loads(parked.content[0].text)
    assert envelope["status"] == "pending_approval", envelope
    assert purges() == [], RECEIVED
    seen = await session.call_tool("gateway-pending-actions", {"pendingActionId": envelope["pendingActionId"]})
    assert json.loads(seen.content[0].text)["state"] == "pending", seen
    mine = await session.call_tool("gateway-pending-actions", {})
    newest = json.loads(mine.content[0].text)["pendingActions"][0]
    assert newest["pendingActionId"] == envelope["pendingActionId"], mine


class Answers:
    """The present user, as the SDK's elicitation callback: answers in turn,
    and remembers what each form said."""

    def __init__(self, *actions):
        self.actions = list(actions)
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params.message)
        action = self.actions.pop(0)
        return mcp_types.ElicitResult(action=action, content={} if action == "accept" else None)


async def confirmed(session, answers):
    """With `--confirm elicit` the user is asked: accept runs the action once,
    with the confirmation member; decline runs nothing."""
    RECEIVED.clear()
    done = await session.call_tool("action_purge_ticket", {"recordId": "t1"})
    assert not done.is_error, done
    assert [p["body"] for p in purges()] == [{"params": {}, "confirm": True}], RECEIVED
    assert "purge_ticket" in answers.asked[0] and "t1" in answers.asked[0], answers.asked
    RECEIVED.clear()
    refused = await session.call_tool("action_purge_ticket", {"recordId": "t1"})
    assert refused.is_error, refused
    assert "declined" in refused.content[0].text, refused
    assert purges() == [], RECEIVED
    assert len(answers.asked) == 2, answers.asked


def serve_args(url, tmp, name, *extra):
    return ["serve", "--stack", STACK, "--server", url, "--approvals", os.path.join(tmp, f"{name}.sqlite"),
            "--audit", os.path.join(tmp, f"{name}.jsonl"), *extra]


async def elicit_over_stdio(url, tmp):
    params = StdioServerParameters(
        command=BINARY,
        args=serve_args(url, tmp, "elicit-stdio", "--confirm", "elicit"),
        env={"OBJECTSTACK_API_KEY": KEY, "RUST_LOG": "warn", "PATH": os.environ.get("PATH", "")},
    )
    answers = Answers("accept", "decline")
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=answers) as session:
            await session.initialize()
            await confirmed(session, answers)
    print("stdio, elicitation (initialize): ok")


async def over_stdio(url, tmp):
    params = StdioServerParameters(
        command=BINARY,
        args=serve_args(url, tmp, "stdio"),
        env={"OBJECTSTACK_API_KEY": KEY, "RUST_LOG": "warn", "PATH": os.environ.get("PATH", "")},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session)
            await queued(session)
    print("stdio: ok")


def start_http(url, tmp, name, *extra):
    """`serve --transport http` on a free port; the process and its endpoint."""
    port = free_port()
    process = subprocess.Popen(
        [BINARY, *serve_args(url, tmp, name, "--transport", "http", "--listen", f"127.0.0.1:{port}", *extra)],
        env={**os.environ, "RUST_LOG": "warn"},
    )
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.1)
    return process, f"http://127.0.0.1:{port}/mcp"


def stop(process):
    process.terminate()
    process.wait(timeout=20)


async def over_http(url, tmp):
    process, endpoint = start_http(url, tmp, "http")
    try:
        async with httpx2.AsyncClient() as anonymous:
            refused = await anonymous.post(endpoint, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                           headers={"accept": "application/json, text/event-stream"})
            assert refused.status_code == 401, refused.status_code
        # The SDK ends its session with DELETE on leaving, and logs a warning
        # when the answer is not one it counts as a success.
        warnings = []
        handler = logging.Handler(level=logging.WARNING)
        handler.emit = lambda record: warnings.append(record.getMessage())
        logging.getLogger("mcp").addHandler(handler)
        async with httpx2.AsyncClient(headers={"authorization": f"Bearer {KEY}"}, timeout=30) as client:
            async with streamable_http_client(endpoint, http_client=client) as (read, write):
                async with ClientSession(read, write) as session:
                    await exercise(session)
                    await queued(session)
        logging.getLogger("mcp").removeHandler(handler)
        assert not warnings, warnings
        print("http: ok")
    finally:
        stop(process)


async def elicit_over_http(url, tmp):
    """The SDK's own high-level `Client`, as an application would use it:
    it negotiates the newest revision (2026-07-28, sessionless), where the
    confirmation comes back as `input_required` and the SDK asks the user
    and retries by itself."""
    process, endpoint = start_http(url, tmp, "elicit-http", "--confirm", "elicit")
    try:
        answers = Answers("accept", "decline")
        async with httpx2.AsyncClient(headers={"authorization": f"Bearer {KEY}"}, timeout=30) as http:
            transport = streamable_http_client(endpoint, http_client=http)
            async with Client(transport, elicitation_callback=answers) as client:
                assert client.protocol_version == "2026-07-28", client.protocol_version
                await confirmed(client, answers)
        print("http, elicitation (2026-07-28, input_required): ok")
    finally:
        stop(process)


async def main():
    url = start_fake()
    with tempfile.TemporaryDirectory() as tmp:
        await over_stdio(url, tmp)
        await over_http(url, tmp)
        await elicit_over_stdio(url, tmp)
        await elicit_over_http(url, tmp)
    print("python mcp smoke: 4 passed, 0 failed")


if __name__ == "__main__":
    asyncio.run(main())
