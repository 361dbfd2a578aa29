#!/usr/bin/env python3
"""Makes the real-text fixture of the trainer's test (tests/trainer/real_text_test.cpp):
kjv-genesis.jsonl, the first 16 chapters of Genesis in the King James Version (public domain;
the text of Debian's bible-kjv-text 4.38, `bible -f Gen1:1-Gen16:16`), one chapter per line in
its "text" field; and kjv-genesis-tokenizer.json, a byte-level BPE of 512 tokens trained by
`tokenizers` 0.23.3 on the first 8 chapters, GPT-NeoX style (NFC, ByteLevel without prefix space,
<|endoftext|> = 0, <|padding|> = 1); and kjv-genesis-roberta-tokenizer.json, the same in RoBERTa's
style (<s> 0, <pad> 1, </s> 2, <unk> 3, and <mask> = 511 with lstrip as roberta-base's, for the
masked LM; vocabulary 512); and kjv-genesis-llama-tokenizer.json, a SentencePiece-style BPE of 512
tokens in Llama-2's format (<unk> 0, <s> 1, </s> 2, the byte-fallback tokens <0x00>..<0xFF> = 3..258,
byte_fallback and fuse_unk; normalizer Prepend("▁") then Replace(" " -> "▁"), no pre-tokenizer;
Llama-2's decoder and <s> template), trained on the same chapters split into words as Metaspace
splits them. The files are committed; this script remakes them:
  bible -f Gen1:1-Gen16:16 > gen.txt && .venv/bin/python tests/data/kjv-genesis.py gen.txt
or, without Debian's bible-kjv, from the committed text itself (the same files):
  .venv/bin/python tests/data/kjv-genesis.py tests/data/kjv-genesis.jsonl"""
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
    source = Path(sys.argv[1])
    if source.suffix == ".jsonl":
        docs = [json.loads(line)["text"] for line in source.read_text().splitlines()]
    else:
        docs = chapters(source.read_text())[:CHAPTERS]
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
    train_llama_tokenizer(docs, 512).save(str(here / "kjv-genesis-llama-tokenizer.json"))


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


BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]
# Llama-2's tokenizer.json sections around the model (as transformers' LlamaConverter writes them).
LLAMA_NORMALIZER = {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": "\u2581"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
LLAMA_DECODER = {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
    {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
LLAMA_POST_PROCESSOR = {
    "type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
             {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}


def train_llama_tokenizer(docs, vocab_size):
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    # Training only: words as SentencePiece sees them ("▁In", "▁the"); the file has Llama-2's
    # normalizer and no pre-tokenizer, which give the same words' tokens.
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size,
                                  special_tokens=["<unk>", "<s>", "</s>"] + BYTE_TOKENS,
                                  show_progress=False)
    tokenizer.train_from_iterator(docs[: CHAPTERS // 2], trainer)
    data = json.loads(tokenizer.to_str())
    data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] not in BYTE_TOKENS]
    data.update(normalizer=LLAMA_NORMALIZER, pre_tokenizer=None, decoder=LLAMA_DECODER,
                post_processor=LLAMA_POST_PROCESSOR)
    return Tokenizer.from_str(json.dumps(data))


if __name__ == "__main__":
    main()
