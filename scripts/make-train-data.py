#!/usr/bin/env python3
"""Training data for the trainer's end-to-end run: an English text that a Debian package ships (the
King James Bible, Debian's bible-kjv), one document per chapter in a seeded order, a small
byte-level BPE tokenizer trained with `tokenizers` (PyPI) on the first part of it, and the whole
text tokenized by `gpudays data tokenize` into the Megatron-LM format.

Run by scripts/make-train-data.sh (which installs bible-kjv and the venv); see docs/data.md."""
import argparse
import json
import random
import re
import subprocess
from pathlib import Path

VERSE = re.compile(r"^(\S+?)(\d+):(\d+) (.*)$")


def chapters(bible_text):
    docs, current, key = [], [], None
    for line in bible_text.splitlines():
        match = VERSE.match(line)
        if match:
            book, chapter, _, verse = match.groups()
            if (book, chapter) != key and current:
                docs.append(" ".join(current))
                current = []
            key = (book, chapter)
            current.append(verse.strip())
        elif line.strip() and current:
            current[-1] += " " + line.strip()
    if current:
        docs.append(" ".join(current))
    return docs


def train_tokenizer(texts, vocab_size, path):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()  # as the GPT-NeoX tokenizer
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>", "<|padding|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.save(str(path))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--gpudays", required=True, help="the gpudays binary")
    parser.add_argument("--vocab-size", type=int, default=4096)
    parser.add_argument("--tokenizer-fraction", type=float, default=0.5,
                        help="fraction of the chapters the tokenizer is trained on")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], check=True, capture_output=True,
                          text=True).stdout
    docs = chapters(text)
    random.Random(args.seed).shuffle(docs)
    with open(out / "kjv.jsonl", "w", encoding="utf-8") as f:
        for doc in docs:
            f.write(json.dumps({"text": doc}, ensure_ascii=False) + "\n")
    train_tokenizer(docs[: int(len(docs) * args.tokenizer_fraction)], args.vocab_size,
                    out / "tokenizer.json")
    subprocess.run([args.gpudays, "data", "tokenize", "--tokenizer", str(out / "tokenizer.json"),
                    "--out", str(out / "kjv"), str(out / "kjv.jsonl")], check=True)
    print(f"{len(docs)} chapters; tokenizer {out / 'tokenizer.json'} ({args.vocab_size} tokens); "
          f"dataset prefix {out / 'kjv'}")


if __name__ == "__main__":
    main()
