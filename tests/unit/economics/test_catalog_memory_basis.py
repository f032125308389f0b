"""Every chip's memory states the unit its source published it in and that source, and is
turned into bytes by one rule (decimal GB, binary GiB and MiB), not by each reader."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from acceval.economics.catalog import MEMORY_BYTES_PER_UNIT, Hardware, load_catalog


def test_every_entry_with_memory_declares_its_basis_and_source() -> None:
    cat = load_catalog()
    with_memory = [hw for hw in cat.hardware.values() if hw.memory is not None]
    assert len(with_memory) >= 8
    for hw in with_memory:
        assert hw.memory is not None
        assert hw.memory.unit in MEMORY_BYTES_PER_UNIT, hw.id
        assert hw.memory.source.strip(), hw.id
        assert hw.memory_bytes == hw.memory.value * MEMORY_BYTES_PER_UNIT[hw.memory.unit]


def test_gib_and_gb_are_not_the_same_number_of_bytes() -> None:
    cat = load_catalog()
    assert cat.hardware["trn3"].memory_bytes == 144 * 2**30     # the Neuron docs: 144 GiB
    assert cat.hardware["mi300x"].memory_bytes == 192e9         # AMD: 192 GB
    h200 = cat.hardware["h200"].memory_bytes
    assert h200 is not None and h200 / 2**30 == pytest.approx(140.4, abs=0.05)


def test_a_memory_unit_that_is_no_memory_unit_is_refused_with_the_fix() -> None:
    with pytest.raises(ValidationError) as err:
        Hardware.model_validate({"id": "x", "name": "x", "vendor": "v", "kind": "gpu",
                                 "memory": {"value": 80, "unit": "gigs", "source": "s"}})
    assert "GB is 10^9 bytes" in str(err.value) and "x: memory.unit" in str(err.value)
