"""A user's own agent program, as a test runs it through ``agents.targets[].command``: the
OpenAI Agents SDK (a real third-party agent framework) with the episode's tools over MCP
(``ACCEVAL_MCP_URL``) and a model behind an OpenAI-compatible chat API (``MODEL_NAME``; in
the tests, the mock engine's scripted tool-calling mode), reached at ``MODEL_BASE_URL`` or,
when that is not set, where the OpenAI client itself looks (``OPENAI_BASE_URL``: acceval's
recording proxy, for a target with ``command.model``). It stops when the ``done`` tool is
called."""

from __future__ import annotations

import asyncio
import os

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI


async def main() -> None:
    set_tracing_disabled(True)  # nothing leaves this machine
    client = AsyncOpenAI(base_url=os.environ.get("MODEL_BASE_URL"),
                         api_key=os.environ.get("OPENAI_API_KEY", "unused"), max_retries=0)
    model = OpenAIChatCompletionsModel(model=os.environ["MODEL_NAME"], openai_client=client)
    async with MCPServerStreamableHttp(params={"url": os.environ["ACCEVAL_MCP_URL"]},
                                       client_session_timeout_seconds=60) as tools:
        agent = Agent(name="shopper", instructions=os.environ["ACCEVAL_SYSTEM_PROMPT"],
                      mcp_servers=[tools], model=model,
                      tool_use_behavior={"stop_at_tool_names": ["done"]})
        await Runner.run(agent, os.environ["ACCEVAL_GOAL"],
                         max_turns=int(os.environ["ACCEVAL_MAX_STEPS"]) + 1)


if __name__ == "__main__":
    asyncio.run(main())
