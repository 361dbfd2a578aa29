#!/usr/bin/env python3
"""Makes the real-text fixture of the trainer's test (tests/trainer/real_text_test.cpp):
kjv-genesis.jsonl, the first 16 chapters of Genesis in the King James Version (public domain;
the text of Debian's bible-kjv-text 4.38, `bible -f Gen1:1-Gen16:16`), one chapter per line in
its "text" field; and kjv-genesis-tokenizer.json, a byte-level BPE of 512 tokens trained by
`tokenizers` 0.23.3 on the first 8 chapters, GPT-NeoX style (NFC, ByteLevel without prefix space,
<|endoftext|> = 0, <|padding|> = 1); and kjv-genesis-roberta-tokenizer.json, the same in RoBERTa's
style (<s> 0, <pad> 1, </s> 2, <unk> 3, and <mask> = 511 with lstrip as roberta-base's, for the
masked LM; vocabulary 512). The files are committed; this script remakes them:
  bible -f Gen1:1-Gen16:16 > gen.txt && .venv/bin/python tests/data/kjv-genesis.py gen.txt"""
import json
import re
import sys
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

VERSE = re.compile(r"^(\S+?)(\d+):(\d+) (.*)$")
CHAPTERS = 16


def chapters(text):
    docs, key = [], None
    for line in text.splitlines():
        match = VERSE.match(line)
        if match:
            book, chapter, _, verse = match.groups()
            if (book, chapter) != key:
                docs.append([])
                key = (book, chapter)
            docs[-1].append(verse.strip())
        elif line.strip() and docs:
            docs[-1][-1] += " " + line.strip()
    return [" ".join(d) for d in docs]


def main():
    docs = chapters(Path(sys.argv[1]).read_text())[:CHAPTERS]
    here = Path(__file__).parent
    with open(here / "kjv-genesis.jsonl", "w") as out:
        for d in docs:
            out.write(json.dumps({"text": d}) + "\n")
    train_tokenizer(docs, 512, ["<|endoftext|>", "<|padding|>"]).save(
        str(here / "kjv-genesis-tokenizer.json"))
    roberta = train_tokenizer(docs, 511, ["<s>", "<pad>", "</s>", "<unk>"])
    roberta.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False,
                                           special=True)])
    roberta.save(str(here / "kjv-genesis-roberta-tokenizer.json"))


def train_tokenizer(docs, vocab_size, special_tokens):
    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special_tokens,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tokenizer.train_from_iterator(docs[: CHAPTERS // 2], trainer)
    return tokenizer


if __name__ == "__main__":
    main()
