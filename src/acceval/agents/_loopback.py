"""One aiohttp app on 127.0.0.1 at a port the system picks, inside the caller's event loop:
the shop, the scripted policy's endpoint, the recording proxy and the flow proxy all serve
this way (never on another interface)."""

from __future__ import annotations

from aiohttp import web


class LoopbackSite:
    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def start(self, app: web.Application) -> int:
        """Serve ``app`` and return its port."""
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
