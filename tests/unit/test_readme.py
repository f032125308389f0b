"""The study shown in the README is valid and its prices resolve (docs that cannot rot)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from acceval.economics import load_catalog, resolve_rate
from acceval.study import study_from_dict

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_study_validates_and_prices_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```yaml\n# study.yaml\n(.*?)```", text, re.S)
    assert block is not None
    study = study_from_dict(yaml.safe_load(block.group(1)))
    catalog = load_catalog(None)
    for t in study.targets:
        assert t.price is not None
        rate = resolve_rate(t.name, t.price, catalog, t.platform.hardware)
        assert rate.usd_per_chip_hour.value is not None


def test_readme_opens_with_the_two_commands() -> None:
    head = README.read_text(encoding="utf-8")[:600]
    assert "make demo" in head and "make test" in head


def test_readme_prices_show_the_bill_arithmetic() -> None:
    # Each target's comment states its rate per chip-hour and chips x rate per replica, and
    # the figures are what the bill computes (a per-replica price typed as per chip-hour
    # would overstate the cost by the chip count).
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```yaml\n# study.yaml\n(.*?)```", text, re.S)
    assert block is not None
    study = study_from_dict(yaml.safe_load(block.group(1)))
    catalog = load_catalog(None)
    for t in study.targets:
        assert t.price is not None
        chip = resolve_rate(t.name, t.price, catalog, t.platform.hardware).usd_per_chip_hour
        assert chip.value is not None
        rate = f"{chip.value:.2f}" if round(chip.value, 2) == chip.value else f"{chip.value:g}"
        said = f"{t.platform.chips} chips x ${rate} = " \
               f"${t.platform.chips * chip.value:,.2f} an hour per replica"
        assert said in " ".join(block.group(1).replace("#", " ").split()), said
    assert "per CHIP-hour" in block.group(1) and "per **chip-hour**" in text
