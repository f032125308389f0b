"""The console's plan line: one efficiency for one point, a range only when the ends differ."""

from acceval.report._claims import _reach


def test_one_point_is_one_figure_and_several_a_range() -> None:
    assert _reach([]) == ""
    assert _reach([0.098]) == ("; measured efficiency 9.8% of the planned bound at its batch, "
                               "over 1 closed-loop point")
    assert _reach([0.0107, 0.0138]).startswith("; measured efficiency 1.07%–1.38% of ")
    assert _reach([0.0107, 0.0138]).endswith("over 2 closed-loop points")
    assert "–" not in _reach([0.5, 0.5])
