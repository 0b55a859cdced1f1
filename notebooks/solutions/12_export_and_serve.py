"""Reference solution, notebook 12. Check: `tfm.exercises.check_rest_response(rest_response)`."""


def rest_response(outputs):
    """The signature's outputs (NumPy) -> TF Serving's row-format REST body: one object per input, JSON types."""
    rows = zip(outputs["translations"], outputs["scores"], outputs["truncated"])
    return {"predictions": [{"translations": text.decode("utf-8"),  # bytes are no JSON: decode the UTF-8
                             "scores": float(score),  # NumPy float32 -> Python float
                             "truncated": bool(cut)}  # NumPy bool -> Python bool
                            for text, score, cut in rows]}
