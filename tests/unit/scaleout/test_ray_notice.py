"""A private Ray that a run starts says nothing on the console about its token
authentication being on; its warning when authentication is off still shows."""

from __future__ import annotations

import logging

from acceval.scaleout.ray_backend import _token_enabled_notice


def _record(msg: str) -> logging.LogRecord:
    return logging.LogRecord("ray._private.authentication.authentication_token_setup",
                             logging.WARNING, __file__, 1, msg, None, None)


def test_the_enabled_notice_is_dropped_and_the_disabled_warning_kept() -> None:
    assert not _token_enabled_notice(_record(
        "Token authentication is enabled for this Ray cluster. Set RAY_AUTH_MODE=disabled to "
        "opt out."))
    assert _token_enabled_notice(_record(
        "Token authentication is disabled for this Ray cluster. Anyone with network access "
        "to the cluster can run arbitrary code and access its data."))
