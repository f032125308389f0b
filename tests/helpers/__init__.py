"""Test helpers shared by unit and integration tests (real servers on 127.0.0.1)."""
