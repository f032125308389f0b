"""A real BPE tokenizer file with merges, trained in the test (no download): byte-level like
GPT-2's and Llama 3's, so random text merges and splits across token joins."""

from __future__ import annotations

from pathlib import Path

_WORDS = ("the", "model", "answers", "every", "request", "in", "time", "and", "the", "server",
          "keeps", "its", "cache", "warm", "while", "tokens", "stream", "back", "one", "at", "a",
          "time;", "prefill", "costs", "more", "than", "decode,", "and", "batching", "trades",
          "latency", "for", "throughput", "on", "each", "accelerator", "we", "compare")


def bpe_tokenizer_file(folder: Path, vocab_size: int = 400) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<s>", "</s>", "<unk>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    corpus = [" ".join(_WORDS[(i * 7 + j) % len(_WORDS)] for j in range(12)) for i in range(300)]
    tok.train_from_iterator(corpus, trainer)
    path = folder / "tokenizer.json"
    tok.save(str(path))
    return path
