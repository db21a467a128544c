"""The stdio wire between an MCP client and the SDK's server (pix.mcp).

The SDK alone drops what it cannot read and ends the session at end of input, dropping the
calls still running: a client then waits forever, or loses answers. pix reads the client's
stream itself (claim_stdin, LastLine) and puts two relays between the SDK and the wire
(serve_stdio): every line gets an answer, and the end of input waits for every request read.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections import Counter

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage


def claim_stdin() -> io.TextIOWrapper:
    """The client's stream as text, read from a private copy of fd 0, with fd 0 itself
    pointed at /dev/null (as the SDK's own transport does): a child process (git) that
    inherits stdin must never read the client's messages."""
    wire = os.dup(0)
    quiet = os.open(os.devnull, os.O_RDONLY)
    os.dup2(quiet, 0)
    os.close(quiet)
    # surrogateescape: bytes that are not UTF-8 reach the request as they do from a command
    # line, and are refused as there ("not valid UTF-8"), never run as U+FFFD.
    return open(wire, encoding="utf-8", errors="surrogateescape", closefd=True)  # noqa: SIM115


class LastLine:
    """The server's stdin, one line at a time, keeping the last: the SDK reads a line and
    hands on what it made of it before reading the next, so an unreadable item is that line."""

    def __init__(self, stream: anyio.AsyncFile) -> None:
        self._lines = stream.__aiter__()
        self.last = ""

    def __aiter__(self) -> LastLine:
        return self

    async def __anext__(self) -> str:
        self.last = await self._lines.__anext__()
        return self.last


def request_key(value: object) -> int | str | None:
    """A request id as the SDK correlates it (mcp.shared.dispatcher): a string or an integer
    but never a bool (True would be request 1), and "7" the same request as 7."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return int(value)
    return value


class OpenRequests:
    """The requests read and not yet answered, by request_key. A request the client cancels
    (notifications/cancelled) gets no answer, so it is no longer waited for."""

    def __init__(self) -> None:
        self._open: Counter[int | str] = Counter()
        self._changed = anyio.Event()

    def read(self, message: object) -> None:
        if isinstance(message, types.JSONRPCRequest):
            key = request_key(message.id)
            if key is not None:
                self._open[key] += 1
        elif isinstance(message, types.JSONRPCNotification) and (
            message.method == "notifications/cancelled"
        ):
            params = message.params if isinstance(message.params, dict) else {}
            self._close(request_key(params.get("requestId")))

    def written(self, message: object) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._close(request_key(message.id))

    def _close(self, key: int | str | None) -> None:
        if key is not None and self._open[key] > 0:
            self._open[key] -= 1
            self._open += Counter()  # drops the ids at zero
            self._changed.set()

    async def all_answered(self) -> None:
        while self._open:
            self._changed = anyio.Event()
            await self._changed.wait()


def bad_id(message: object, line: str) -> bool:
    """Whether the SDK's `message` is a request whose id is no id (null, a number with a
    fraction, a bool, an object): the SDK reads such a line as a notification of a method
    that is none, answers nothing, and the client waits forever for that id. Only then is
    the line read again: a request (a string or integer id) never is."""
    if not isinstance(message, types.JSONRPCNotification):
        return False
    if message.method.startswith("notifications/"):
        return False  # a notification carrying an id: read as one, as the SDK does
    try:
        parsed = json.loads(line)
    except ValueError:
        return False
    return isinstance(parsed, dict) and "id" in parsed


def unreadable(line: str) -> types.JSONRPCError:
    """The JSON-RPC error for a line the SDK could not read: not JSON (-32700, no id), or
    JSON that is no MCP message, such as text with an unpaired surrogate (-32600, with the
    line's id when it has one)."""
    try:
        message = json.loads(line)
    except ValueError:
        error = types.ErrorData(code=-32700, message="parse error: the line is not JSON")
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
    ident = message.get("id") if isinstance(message, dict) else None
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        ident = None
    error = types.ErrorData(
        code=-32600,
        message="invalid request: not a JSON-RPC message MCP accepts (a field missing or of "
        "the wrong type, an id that is not a string or an integer, or text that is not valid "
        "UTF-8: bytes that are not, or an unpaired surrogate)",
    )
    return types.JSONRPCError(jsonrpc="2.0", id=ident, error=error)


async def serve_stdio(server: Server) -> None:
    """Run `server` over stdin and stdout until the client closes stdin and every request
    read is answered."""
    lines = LastLine(anyio.wrap_file(claim_stdin()))
    async with stdio_server(stdin=lines) as (read_stream, write_stream):
        # Two relays stand between the SDK and the wire. Inbound, a line the SDK cannot
        # read reaches it as an exception, and nothing answers it: the client would wait
        # forever, so each gets its JSON-RPC error. At end of input the SDK ends the
        # session and drops the calls still running (`printf ... | pix mcp`), so the
        # inbound relay holds the end back until the outbound one has seen every request
        # answered.
        inbound_send, inbound_receive = anyio.create_memory_object_stream(0)
        outbound_send, outbound_receive = anyio.create_memory_object_stream(0)
        open_requests = OpenRequests()

        async def inbound() -> None:
            async with inbound_send:
                async for item in read_stream:
                    if not isinstance(item, Exception) and not bad_id(item.message, lines.last):
                        open_requests.read(item.message)
                        await inbound_send.send(item)
                    elif lines.last.strip():
                        await write_stream.send(SessionMessage(unreadable(lines.last)))
                await open_requests.all_answered()

        async def outbound() -> None:
            # Closing the wire's stream at the end is what lets stdio_server end (the SDK
            # closes the stream it was given: outbound_send).
            async with outbound_receive, write_stream:
                async for item in outbound_receive:
                    await write_stream.send(item)
                    open_requests.written(item.message)

        async with anyio.create_task_group() as group:
            group.start_soon(inbound)
            group.start_soon(outbound)
            async with outbound_send:
                await server.run(
                    inbound_receive, outbound_send, server.create_initialization_options()
                )
