"""Split names shared by every loader and `tfm.decoding.bleu`: "train", "validation", "test" (and aliases)."""

SPLITS = ("train", "validation", "test")
SPLIT_ALIASES = {"val": "validation", "valid": "validation", "dev": "validation"}


def canonical_split(split):
    """'train', 'validation' or 'test' from a split name or alias ('val', 'valid', 'dev').

    Args:
        split: str. A split name or alias.

    Returns:
        str.

    Raises:
        ValueError: naming the bad split and the valid ones.

    Example:
        >>> canonical_split("dev"), canonical_split("test")
        ('validation', 'test')
    """
    name = SPLIT_ALIASES.get(split, split)
    if name not in SPLITS:
        raise ValueError(f"split={split!r}: expected one of {list(SPLITS)} (or aliases {sorted(SPLIT_ALIASES)})")
    return name
