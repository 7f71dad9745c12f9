import numpy as np
import pytest

from replicaplan.book import glue_number


def test_glue_number_rejects_non_numbers():
    with pytest.raises(ValueError, match="'x'"):
        glue_number("x", "7.5")
    with pytest.raises(ValueError, match="'flag'"):
        glue_number("flag", True)


def test_glue_number_unwraps_numpy(monkeypatch):
    seen = {}
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: seen.update({name: value}))
    glue_number("a", np.float64(1.5))
    glue_number("b", np.int64(3))
    assert type(seen["a"]) is float and type(seen["b"]) is int
