"""Reference solution, notebook 09. Check: `tfm.exercises.check_bucket_batch_sizes(bucket_batch_sizes)`."""


def bucket_batch_sizes(bounds, tokens_per_batch, replicas=1):
    """Pairs per global batch for each bucket bound L: B * L <= the budget, B a multiple of `replicas` (>= 1 each)."""
    sizes = []
    for bound in bounds:
        pairs = tokens_per_batch // bound  # the budget counts the global batch, all replicas together
        pairs = pairs // replicas * replicas  # equal shares: round down to a multiple of the replicas
        sizes.append(max(replicas, pairs))  # but one pair per replica at least
    return sizes
