"""Smoke test of `objectstack-ai serve` with the official MCP Python SDK
(`pip install mcp`): a client nobody here wrote, over stdio and over
Streamable HTTP, in front of a small fake ObjectStack server (127.0.0.1)
that records what it receives.

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
from mcp import ClientSession, StdioServerParameters
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
    done = await session.call_tool("action_escalate_ticket", {"recordId": "t1", "reason": "python"})
    assert not done.is_error, done
    posts = [r for r in RECEIVED if r["method"] == "POST"]
    assert posts[-1]["body"] == {"params": {"reason": "python"}}, posts
    assert all(r["auth"] == f"Bearer {KEY}" for r in RECEIVED), RECEIVED
    RECEIVED.clear()
    bad = await session.call_tool("action_escalate_ticket", {"recordId": "t1"})
    assert bad.is_error, bad
    assert RECEIVED == [], RECEIVED


async def over_stdio(url, tmp):
    params = StdioServerParameters(
        command=BINARY,
        args=["serve", "--stack", STACK, "--server", url,
              "--approvals", os.path.join(tmp, "stdio.sqlite"), "--audit", os.path.join(tmp, "stdio.jsonl")],
        env={"OBJECTSTACK_API_KEY": KEY, "RUST_LOG": "warn", "PATH": os.environ.get("PATH", "")},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session)
    print("stdio: ok")


async def over_http(url, tmp):
    port = free_port()
    process = subprocess.Popen(
        [BINARY, "serve", "--stack", STACK, "--server", url, "--transport", "http",
         "--listen", f"127.0.0.1:{port}", "--approvals", os.path.join(tmp, "http.sqlite"),
         "--audit", os.path.join(tmp, "http.jsonl")],
        env={**os.environ, "RUST_LOG": "warn"},
    )
    try:
        endpoint = f"http://127.0.0.1:{port}/mcp"
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.1)
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
        logging.getLogger("mcp").removeHandler(handler)
        assert not warnings, warnings
        print("http: ok")
    finally:
        process.terminate()
        process.wait(timeout=20)


async def main():
    url = start_fake()
    with tempfile.TemporaryDirectory() as tmp:
        await over_stdio(url, tmp)
        await over_http(url, tmp)
    print("python mcp smoke: 2 passed, 0 failed")


if __name__ == "__main__":
    asyncio.run(main())
