#!/usr/bin/env python3
"""Parity of src/data with the Python references (CTest entry DataParity.Python):
1. `gpudays data tokenize` against the `tokenizers` package, token for token, on varied text
   (Unicode scripts, combining marks, emoji, whitespace runs, digits, contractions, special tokens,
   very long words), with tokenizers trained here in the GPT-NeoX style (NFC, ByteLevel, special and
   whitespace added tokens), in a second style (prefix space, no normalizer, "a b" merges) and in
   RoBERTa's (<s> <pad> </s> <unk>, and <mask> with lstrip as roberta-base's tokenizer.json; added
   tokens with rstrip, and with both, next to every kind of whitespace);
2. the Megatron-LM format: what gpudays writes is read by megatron-core's IndexedDataset, and a file
   written by megatron-core's IndexedDatasetBuilder is read by `gpudays data inspect --sample`.
Exits 77 (skipped) when the reference packages are not installed (scripts/install-torch.sh ref)."""
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers, trainers
except ImportError:
    print("tokenizers not installed: skipped")
    sys.exit(77)

GPUDAYS = sys.argv[1]

FIXED = [
    "Hello world! It's a test; they'll say we'd've done it. I'M HERE, 'tis true's.",
    "  leading spaces,\ttabs\t\tand\n\nnewlines\r\n  \n   trailing   ",
    "naïve café, ﬁnancial, Ångström, e\u0301 (decomposed), ＡＢＣ full width, ﬀ ligature",
    "数字 123 4567 ١٢٣ ²³ ½ ⅧⅨ 3.14159 1,000,000 0x1F",
    "emoji 😀 👩‍👩‍👧 👍🏽 🇯🇵 ❤️ text🙂text",
    "Русский текст, ελληνικά, עברית, العربية, हिन्दी, 日本語のテキスト, 한국어",
    "special <|endoftext|> inside<|padding|>text <|endoftext|><|endoftext|>",
    "whitespace \u00a0nbsp \u3000ideographic \u2028line sep \u2003em  \u200bzero-width",
    "a" * 5000,
    "x" + "ab" * 2000 + " " + "supercalifragilistic" * 50,
    "punctuation!!! ??? ... --- *** ''' \"\"\" ``` ~~~ @@@ ### $$$ %%% ^^^",
    "        many            spaces                    ",
    "",
    " ",
    "'",
    "'s",
    "\n",
]

POOLS = ["abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", "      \t\n\r\u00a0\u3000",
         "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", "àéîõüñçßøåæœ", "\u0301\u0308\u0327", "日本語中文한국어",
         "😀🙂👍🏽🇯🇵❤️👩‍👩‍👧", "١٢٣²³½Ⅷ", "ЖжЩщΩωאב", "'s 't 're 've 'm 'll 'd"]


def random_texts(count, seed):
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        pieces = []
        for _ in range(rng.randint(1, 40)):
            pool = rng.choice(POOLS)
            pieces.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 12))))
        texts.append("".join(pieces))
    return texts


def corpus():
    words = ("the of and to in is was he for it with as his on be at by had are but from or have an they "
             "which one you were her all she there would their we him been has when who will more no if "
             "out so said what up its about into than them can only other new some could time these two "
             "may then do first any my now such like our over man me even most made after also did many "
             "before must through back years where much your way well down should because each just those "
             "people how too little state good very make world still own see men work long get here between "
             "both life being under never day same another know while last might us great old year off come "
             "since against go came right used take three").split()
    rng = random.Random(1)
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(5, 30))) for _ in range(3000)]
    return lines + FIXED + random_texts(300, 2)


def neox_style(path):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=1500, special_tokens=["<|endoftext|>", "<|padding|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    # GPT-NeoX's tokenizer adds runs of spaces as non-special, normalized tokens.
    tok.add_tokens([AddedToken(" " * n, normalized=True, special=False) for n in (2, 4, 8, 16)])
    tok.save(str(path))
    return tok


def prefix_space_style(path):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    trainer = trainers.BpeTrainer(vocab_size=800, special_tokens=["<eod>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    tok.save(str(path))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in data["model"]["merges"]]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return Tokenizer.from_file(str(path))  # the reference reads the rewritten file too


def roberta_style(path):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=900, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True),
                            AddedToken("<r>", lstrip=False, rstrip=True, normalized=False, special=True),
                            AddedToken("<lr>", lstrip=True, rstrip=True, normalized=False, special=True)])
    tok.save(str(path))
    return tok


def strip_texts(count, seed):
    """Texts with <mask>, <r> and <lr> beside whitespace runs of every kind."""
    fixed = ["The capital of France is <mask>.", "  <mask>  <mask>\t<mask>\n", "a<mask>b <mask>",
             "x \u3000\u00a0<mask>", "<r>   after <r>\n\nnext", "\u00a0<lr>\u2028 y", "<mask><mask> <mask>",
             "<lr> <lr>  <lr>", " <mask> ", "<r> <mask>", "end <lr>", "é <mask> ü"]
    rng = random.Random(seed)
    texts = list(fixed)
    for text in random_texts(count, seed):
        pieces = list(text)
        for _ in range(rng.randint(1, 6)):
            where = rng.randint(0, len(pieces))
            pieces.insert(where, rng.choice(["<mask>", " <mask>", "<r>", "<r> ", "<lr>", "  <lr>  "]))
        texts.append("".join(pieces))
    return texts


def read_megatron(prefix):
    """The sequences of PREFIX.bin/.idx, read by megatron-core when it is installed."""
    try:
        from megatron.core.datasets.indexed_dataset import IndexedDataset
    except ImportError:
        print("megatron-core not installed: skipped")
        sys.exit(77)
    dataset = IndexedDataset(str(prefix), mmap=True)
    return [dataset[i].tolist() for i in range(len(dataset))]


def check_tokenizer(name, tok, tokenizer_json, eod, work, extra=()):
    texts = FIXED + random_texts(400, 3) + list(extra)
    with open(work / f"{name}.jsonl", "w", encoding="utf-8") as f:
        for text in texts:
            f.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
    subprocess.run([GPUDAYS, "data", "tokenize", "--tokenizer", str(tokenizer_json), "--eod", eod,
                    "--out", str(work / name), str(work / f"{name}.jsonl")], check=True)
    sequences = read_megatron(work / name)
    assert len(sequences) == len(texts), (len(sequences), len(texts))
    eod_id = tok.token_to_id(eod)
    failures = 0
    for text, got in zip(texts, sequences):
        expected = tok.encode(text, add_special_tokens=False).ids + [eod_id]
        if got != expected:
            failures += 1
            if failures <= 3:
                print(f"{name}: mismatch on {text[:80]!r}\n  expected {expected[:40]}\n  got      {got[:40]}")
    print(f"{name}: {len(texts) - failures}/{len(texts)} documents identical")
    return failures == 0


def check_megatron_writer(work):
    import numpy
    import torch
    from megatron.core.datasets.indexed_dataset import IndexedDatasetBuilder
    prefix = work / "reference"
    builder = IndexedDatasetBuilder(str(prefix) + ".bin", dtype=numpy.int32)
    documents = [[7, 8, 9], [10, 11], list(range(100, 120))]
    for doc in documents:
        builder.add_item(torch.tensor(doc))
        builder.end_document()
    builder.finalize(str(prefix) + ".idx")
    stream = [t for doc in documents for t in doc]
    out = subprocess.run([GPUDAYS, "data", "inspect", str(prefix), "--seq-len", "5", "--sample", "3"],
                         check=True, capture_output=True, text=True).stdout
    expected = "sample 3: [" + ", ".join(str(t) for t in stream[15:21]) + "]"
    ok = expected in out and "ids below 2147483648" in out
    print(f"megatron-core writer -> gpudays reader: {'identical' if ok else 'DIFFERENT'}\n{out}")
    return ok


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ok = check_tokenizer("neox", neox_style(work / "neox.json"), work / "neox.json", "<|endoftext|>", work)
        ok &= check_tokenizer("prefix", prefix_space_style(work / "prefix.json"), work / "prefix.json",
                              "<eod>", work)
        ok &= check_tokenizer("roberta", roberta_style(work / "roberta.json"), work / "roberta.json", "</s>",
                              work, strip_texts(300, 4))
        ok &= check_megatron_writer(work)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
