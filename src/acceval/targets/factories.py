"""Target clients by name, through the ``acceval.targets`` entry-point group.

A name resolves to a :class:`TargetFactory`, called as ``factory(name, endpoint)``; the
built-in ``openai`` is :class:`~acceval.targets.openai.OpenAITarget`, and a third-party client
(another wire protocol, a vendor SDK) registers in the same group.
"""

from __future__ import annotations

from typing import Protocol

from acceval.loadgen.protocol import Target
from acceval.plugins import installed, load_plugin
from acceval.targets.spec import Endpoint

GROUP = "acceval.targets"


class TargetFactory(Protocol):
    """What a name in the ``acceval.targets`` group resolves to."""

    def __call__(self, name: str, endpoint: Endpoint) -> Target: ...


def target_names() -> list[str]:
    """The target clients installed here, built-ins and plugins."""
    return installed(GROUP)


def make_target(name: str, endpoint: Endpoint, *, client: str | None = None) -> Target:
    """A client for the target called ``name`` at ``endpoint``, built by the client the
    endpoint names (``endpoint.client``, or ``client`` when given) from ``acceval.targets``;
    an unknown client raises :class:`acceval.plugins.PluginError` listing what is installed."""
    factory: TargetFactory = load_plugin(GROUP, client or endpoint.client)
    return factory(name, endpoint)
