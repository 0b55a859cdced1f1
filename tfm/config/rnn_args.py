"""The RNN baselines' argument rules: the cell, the attention and its score, checked alike for `RNNEncoder`,
`RNNDecoder`, `AttentionScore` and `Seq2SeqConfig`.

- `validate_rnn_args`: the cell (`CELLS`), the number of layers and the dropout the encoder and decoder share.
- `validate_score`: a score name (`SCORES`; `SAME_WIDTH_SCORES` compare queries and keys directly) and its units.
- `resolve_attention_args`: the attention (`ATTENTIONS`: none, Bahdanau or Luong) and the paper's defaults for its
  score (`DEFAULT_SCORES`) and width.

Here, not in the layers, so a `Seq2SeqConfig` is checked without TensorFlow.
"""

from tfm.config.validation import validate_fraction

CELLS = ("lstm", "gru")


def validate_rnn_args(cell, num_layers, dropout):
    """`(cell, num_layers, dropout)` checked: the arguments shared by `RNNEncoder` and `RNNDecoder`.

    Args:
        cell: str. "lstm" or "gru".
        num_layers: int >= 1.
        dropout: float in [0, 1).

    Example:
        >>> validate_rnn_args("gru", 2, 0.1)
        ('gru', 2, 0.1)
        >>> validate_rnn_args("rnn", 1, 0.0)
        Traceback (most recent call last):
        ...
        ValueError: cell='rnn': expected one of ['lstm', 'gru']
    """
    if cell not in CELLS:
        raise ValueError(f"cell={cell!r}: expected one of {list(CELLS)}")
    if not isinstance(num_layers, int) or isinstance(num_layers, bool) or num_layers < 1:
        raise ValueError(f"num_layers={num_layers!r} must be an int >= 1")
    return cell, num_layers, validate_fraction("dropout", dropout)


SCORES = ("cosine", "additive", "dot", "general", "scaled_dot")
# Scores that compare queries and keys directly, so both need the same width.
SAME_WIDTH_SCORES = ("cosine", "dot", "scaled_dot")


def validate_score(score, units=None):
    """`(score, units)` checked: a score name and its width; `ValueError` names a bad value.

    Args:
        score: str. One of `SCORES`.
        units: int or None. The additive score's width (needed by it, refused by the others).

    Example:
        >>> validate_score("additive", units=16)
        ('additive', 16)
        >>> validate_score("dot", units=16)
        Traceback (most recent call last):
        ...
        ValueError: units=16 is only used by score='additive', not score='dot'
    """
    if score not in SCORES:
        raise ValueError(f"score={score!r}: expected one of {list(SCORES)}")
    if score == "additive":
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"score='additive' needs units (a positive int), got units={units!r}")
    elif units is not None:
        raise ValueError(f"units={units!r} is only used by score='additive', not score={score!r}")
    return score, units


ATTENTIONS = (None, "bahdanau", "luong")
DEFAULT_SCORES = {"bahdanau": "additive", "luong": "general"}


def resolve_attention_args(attention, score=None, units=None, attention_units=None, input_feeding=False):
    """Validate the attention arguments and fill in the paper defaults.

    Args:
        attention: None, "bahdanau" or "luong".
        score: str or None. The score function; None = the attention's default.
        units: int. The recurrent width, the additive score's default width.
        attention_units: int or None. The additive score's width.
        input_feeding: bool. Luong's input feeding (only with "luong").

    Returns:
        `(score, attention_units)`: `score` defaults to `"additive"` for Bahdanau
        and `"general"` for Luong; `attention_units` to `units` for the additive
        score and None otherwise. Both None without attention.

    Example:
        >>> resolve_attention_args("bahdanau", units=64), resolve_attention_args("luong", units=64)
        (('additive', 64), ('general', None))
    """
    if attention not in ATTENTIONS:
        raise ValueError(f"attention={attention!r}: expected one of {list(ATTENTIONS)}")
    if input_feeding and attention != "luong":
        raise ValueError(f"input_feeding=True needs attention='luong', got attention={attention!r}")
    if attention is None:
        if score is not None or attention_units is not None:
            raise ValueError(
                f"score={score!r} / attention_units={attention_units!r} given but attention=None; "
                "choose attention='bahdanau' or 'luong'"
            )
        return None, None
    score = DEFAULT_SCORES[attention] if score is None else score
    if score == "additive" and attention_units is None:
        attention_units = units
    validate_score(score, attention_units)
    return score, attention_units
