"""Reserved token ids: the one definition shared by tokenizers, masks, losses, models and decoding.

Every tfm vocabulary starts with these four entries, in this order.
"""

PAD, UNK, START, END = "[PAD]", "[UNK]", "[START]", "[END]"
RESERVED_TOKENS = [PAD, UNK, START, END]
PAD_ID, UNK_ID, START_ID, END_ID = 0, 1, 2, 3

__all__ = ["PAD", "UNK", "START", "END", "RESERVED_TOKENS", "PAD_ID", "UNK_ID", "START_ID", "END_ID"]
