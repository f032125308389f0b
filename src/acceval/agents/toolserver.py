"""The environment's tools served to a user's own agent program, while a scenario runs.

Two doors on one loopback port, to the same episode (:class:`~acceval.agents.env.EpisodeEnv`):

- the **Model Context Protocol** (the ``mcp`` package's ``MCPServer``, streamable HTTP) at
  ``/mcp``: tools ``click``, ``type``, ``navigate``, ``confirm``, ``ask_human`` and ``done``,
  with the same descriptions and arguments as the chat API's tools (:mod:`.tools`);
- a small HTTP API: ``GET /api/episode`` (the goal, the system prompt and the tools as OpenAI
  function definitions) and ``POST /api/tools/{name}`` with the arguments as a JSON object
  (answer: ``{"result": text, "ok": bool, "ended": bool}``).

Each call is carried out and recorded by the episode like a call of acceval's own loop, so the
metrics are the same whoever drives. A call when no episode runs, or after ``done``, gets an
error text. The server runs in acceval's event loop (uvicorn), like the shop and the browser.
docs/agents.md has the walk-through.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from typing import Any

from acceval.agents.env import EpisodeEnv
from acceval.agents.proxy import RecordingProxy
from acceval.agents.tools import SYSTEM_PROMPT, TOOLS

MCP_PATH = "/mcp"
NO_EPISODE = "error: no episode is running"
ENDED = "error: the episode has ended (done was called); stop"


def missing() -> str | None:
    """Why the tool server cannot run here (one line saying what to install), or None."""
    from importlib.util import find_spec

    if find_spec("mcp") is None or find_spec("uvicorn") is None:
        return "the MCP server library is missing: pip install 'acceval[agents]' (brings mcp)"
    return None


class ToolServer:
    """One server for a whole agents run; :meth:`attach` points it at the running episode."""

    def __init__(self) -> None:
        self.env: EpisodeEnv | None = None
        self.proxy: RecordingProxy | None = None  # the program's model calls, when proxied
        self._lock = asyncio.Lock()   # one call at a time: an episode is a sequence of steps
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self.port = 0

    @property
    def mcp_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{MCP_PATH}"

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def attach(self, env: EpisodeEnv | None, proxy: RecordingProxy | None = None) -> None:
        self.env, self.proxy = env, proxy

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        """Carry out one tool call on the running episode: (result text, it worked)."""
        async with self._lock:
            env = self.env
            if env is None:
                return NO_EPISODE, False
            if env.out.said_done:
                return ENDED, False
            before = len(env.out.steps)
            turn = self.proxy.turn(before) if self.proxy is not None else None
            text = await env.call(name, json.dumps(args), turn)
            ok = len(env.out.steps) > before and env.out.steps[-1].ok
            return text, ok

    def _mcp(self) -> Any:
        from mcp.server.mcpserver import MCPServer
        from starlette.requests import Request
        from starlette.responses import JSONResponse

        server: Any = MCPServer("acceval", instructions=SYSTEM_PROMPT)
        for spec in TOOLS:
            fn = spec["function"]
            server.add_tool(_tool(self, fn["name"]),
                            name=fn["name"], description=fn["description"],
                            structured_output=False)

        async def episode(request: Request) -> JSONResponse:
            env = self.env
            if env is None:
                return JSONResponse({"error": NO_EPISODE}, status_code=409)
            return JSONResponse({"episode": env.plan.episode, "scenario": env.plan.scenario.id,
                                 "goal": env.goal, "system_prompt": SYSTEM_PROMPT,
                                 "tools": TOOLS, "ended": env.out.said_done})

        async def tool(request: Request) -> JSONResponse:
            try:
                args = json.loads(await request.body() or b"{}")
            except ValueError:
                return JSONResponse({"error": "the body is not JSON"}, status_code=400)
            if not isinstance(args, dict):
                return JSONResponse({"error": "the body must be a JSON object of the tool's "
                                     "arguments"}, status_code=400)
            text, ok = await self.call(str(request.path_params["name"]), args)
            ended = self.env is not None and self.env.out.said_done
            return JSONResponse({"result": text, "ok": ok, "ended": ended})

        server.custom_route("/api/episode", methods=["GET"])(episode)
        server.custom_route("/api/tools/{name}", methods=["POST"])(tool)
        return server

    async def start(self) -> None:
        import uvicorn

        app = self._mcp().streamable_http_app(streamable_http_path=MCP_PATH,
                                              stateless_http=True, json_response=True)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
                raise RuntimeError("the tool server stopped while starting")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 10)
        self._server = self._task = None


def _tool(server: ToolServer, name: str) -> Any:
    """A typed function per tool (MCP reads its schema from the signature)."""

    async def click(ref: int) -> str:
        return (await server.call("click", {"ref": ref}))[0]

    async def type_(ref: int, text: str) -> str:
        return (await server.call("type", {"ref": ref, "text": text}))[0]

    async def navigate(path: str) -> str:
        return (await server.call("navigate", {"path": path}))[0]

    async def confirm(action: str, object: str) -> str:  # the tool's own argument name
        return (await server.call("confirm", {"action": action, "object": object}))[0]

    async def ask_human(question: str) -> str:
        return (await server.call("ask_human", {"question": question}))[0]

    async def done(summary: str) -> str:
        return (await server.call("done", {"summary": summary}))[0]

    fns = {"click": click, "type": type_, "navigate": navigate, "confirm": confirm,
           "ask_human": ask_human, "done": done}
    return fns[name]


__all__ = ["ENDED", "MCP_PATH", "NO_EPISODE", "ToolServer", "missing"]
