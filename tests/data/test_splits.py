import pytest

from tfm.data.splits import canonical_split


def test_names_and_aliases():
    assert [canonical_split(s) for s in ("train", "val", "valid", "dev", "validation", "test")] == [
        "train", "validation", "validation", "validation", "validation", "test"]
    with pytest.raises(ValueError, match="split='tset'"):
        canonical_split("tset")
