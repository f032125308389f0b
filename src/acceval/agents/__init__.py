"""Agent workflows measured end to end (the ``agents:`` section of a study).

The built-in web application (:mod:`~acceval.agents.app`) and its scenarios, the agent loop
over the OpenAI chat API with tools (:mod:`~acceval.agents.loop`) acting in a real headless
Chromium (:mod:`~acceval.agents.browser`), the built-in scripted policy
(:mod:`~acceval.agents.policy`), the raw records (:mod:`~acceval.agents.store`), the
workflow metrics (:mod:`~acceval.agents.metrics`) and the typed section of the result
(:mod:`~acceval.agents.result`). A task is correct only when the final state is right and
nothing forbidden happened. docs/agents.md has the app, the tools and the formulas.

Importing this package loads nothing else: the browser library is needed only to run.
"""
