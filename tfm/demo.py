"""`make demo` / `tfm demo`: the main job, offline, on 2 CPU cores.

Trains the tiny Transformer on a task the project generates (reversing token
sequences) and prints its held-out token accuracy. (The training, decoding and
export issues extend this to BLEU, beam-search translations and a SavedModel.)
"""

import time


def demo_command(args):
    import keras

    import tfm
    from tfm.data.synthetic import sequence_task_ids

    keras.utils.set_random_seed(0)
    train_x, train_y = sequence_task_ids(6000, vocab_size=20, max_length=10, seed=0)
    val_x, val_y = sequence_task_ids(500, vocab_size=20, max_length=10, seed=1)
    config = tfm.TransformerConfig.tiny(vocab_size=20, dropout=0.0, warmup_steps=200)
    model = tfm.build_transformer(config)
    model.compile(optimizer=tfm.build_optimizer(config), loss=tfm.LabelSmoothedCrossEntropy(0.0),
                  metrics=[tfm.MaskedAccuracy()])
    print(f"tiny Transformer, {model.count_params():,} parameters; task: reverse token sequences")
    start = time.time()
    model.fit(train_x, train_y, batch_size=64, epochs=args.epochs or 6, verbose=2)
    result = model.evaluate(val_x, val_y, verbose=0, return_dict=True)
    print(f"held-out token accuracy: {result['accuracy']:.3f} after {time.time() - start:.0f} s")
