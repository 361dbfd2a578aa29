#!/usr/bin/env python3
"""Parity of src/data with the Python references (CTest entry DataParity.Python):
1. `gpudays data tokenize` against the `tokenizers` package, token for token, on varied text
   (Unicode scripts, combining marks, emoji, whitespace runs, digits, contractions, special tokens,
   very long words), with tokenizers trained here in the GPT-NeoX style (NFC, ByteLevel, special and
   whitespace added tokens), in a second style (prefix space, no normalizer, "a b" merges) and in
   RoBERTa's (<s> <pad> </s> <unk>, and <mask> with lstrip as roberta-base's tokenizer.json; added
   tokens with rstrip, and with both, next to every kind of whitespace); and in the kinds Llama-style
   models ship: byte-level BPE behind a Split with Llama-3's pattern (no normalizer, ignore_merges),
   with Qwen2's (NFC) and with GPT-2's written as a Split; SentencePiece-style BPE with byte fallback
   (<unk> <s> </s>, <0x00>..<0xFF>, a small alphabet so that Unicode text falls back to bytes) in
   Llama-2's form (Prepend and Replace normalizers, no pre-tokenizer; also without byte fallback, to
   fuse unknown characters into one <unk>) and Metaspace forms (each prepend_scheme, with and
   without split; a vocabulary trained on whole lines, whose tokens span "▁", tells splitting at
   "▁" from not), and the committed tests/data/kjv-genesis-llama-tokenizer.json; on
   the texts above, tricky ones for those patterns and the King James Genesis of tests/data; and
   each tokenizer's texts as one document read 7 bytes at a time, which gpudays tokenizes in pieces
   (for the SentencePiece kinds too: cut only where no merge joins the space to what precedes it,
   which the line-trained vocabulary's tokens that span "▁" put to the test);
2. the Megatron-LM format: what gpudays writes is read by megatron-core's IndexedDataset, and a file
   written by megatron-core's IndexedDatasetBuilder is read by `gpudays data inspect --sample`.
Exits 77 (skipped) when the reference packages are not installed (scripts/install-torch.sh ref)."""
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from tokenizers import AddedToken, Regex, Tokenizer, models, normalizers, pre_tokenizers, trainers
except ImportError:
    print("tokenizers not installed: skipped")
    sys.exit(77)

GPUDAYS = sys.argv[1]
KJV = Path(__file__).resolve().parent.parent / "data" / "kjv-genesis.jsonl"
KJV_LLAMA = KJV.parent / "kjv-genesis-llama-tokenizer.json"  # committed, Llama-2's format

# The Split patterns as the tokenizer.json files of GPT-2-style models, Meta-Llama-3 and Qwen2 write them.
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                  r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")
BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]

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


# Texts for the Llama-style kinds: contractions in any case (and U+017F, which (?i:'s) matches),
# digit runs, newline runs, trailing whitespace, what the optional lead of [^\r\n\p{L}\p{N}]?\p{L}+
# takes, special tokens and the <0xXX> tokens' spellings in text.
LLAMA_TEXTS = [
    "I'M HERE, YOU'RE THERE, WE'VE GOT IT, SHE'LL GO, HE'D SAY, IT'S, DON'T, they'll, we'd've",
    "mixed 'S 'T 'Re 'rE 'Ve 'vE 'M 'Ll 'lL 'D 'ſ 'ſa 'Sam 'ts 're's 'RED 'LLAMA 'x ''s",
    "digits 1 12 123 1234 12345 123456 1234567 ١٢٣٤ ²³⁴⁵ 3.14159 1,000,000 x2024y 0x1F",
    "newlines\n\n\nrun \r\n\r\n  \n  x \n\t\n y\r\rz\n.\n\n!?\r\n",
    "trailing whitespace   \t  ",
    "\ttab-led \u3000ideographic-led !bang-led .dot-led ,comma\n!!!\n\n?? \n \u00a0nbsp-led",
    "a\u0301b combining \u0301\u0301x ' 's  ''s \u2028line",
    "special <|begin_of_text|> and <|end_of_text|> and <|endoftext|> <s> </s> <unk> inside<s>text",
    "byte tokens spelled out: <0x41> <0x0A> <0xFF> \u2581 already \u2581\u2581marked",
    "   leading spaces", " x", "x ", "  ", "<s>", "<s> hello", "hello</s>world", "</s> </s>  x", "a<s>",
    "'There he'Them I'These we'Man a'Made o'Dead x'Day 1'Red z'Very it'Long 'Little 'ſtate a'ſaid b'ſome",
]


def kjv_texts():
    with open(KJV, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


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


def split_style(path, pattern, normalizer, special_tokens):
    """Byte-level BPE behind a Split (Llama-3's, Qwen2's files): ByteLevel only maps bytes."""
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=1200, special_tokens=special_tokens,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    # Capitalised words and words with the long s (U+017F), one a line, make tokens that a
    # case-sensitive contraction would split differently ("'There" is "'T" "here", not "'" "There"),
    # and sentences ending ".\n" or "!\n\n" tokens that hold punctuation and newlines.
    lines = corpus()[:600]
    words = " ".join(lines).split()
    tok.train_from_iterator(corpus() + ["\n".join(w.title() for w in words[:3000]),
                                        "\n".join(w.replace("s", "\u017f") for w in words[3000:6000]),
                                        ".\n".join(lines[:300]), "!\n\n".join(lines[300:])], trainer)
    tok.save(str(path))
    written = json.loads(path.read_text(encoding="utf-8"))["pre_tokenizer"]["pretokenizers"][0]
    assert written["pattern"]["Regex"] == pattern, written
    return tok


def sentencepiece_model(split):
    """A SentencePiece-style BPE (Llama-2's model section): <unk> <s> </s> = 0 1 2, then the 256
    <0xXX> byte tokens (plain vocabulary, not added tokens), byte_fallback, fuse_unk; trained with a
    small alphabet so that less common characters fall back to bytes. Trained on words (`split`),
    or on whole lines, so that tokens span "\u2581" and splitting or not changes the ids."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=split)
    trainer = trainers.BpeTrainer(vocab_size=1000, special_tokens=["<unk>", "<s>", "</s>"] + BYTE_TOKENS,
                                  limit_alphabet=70, show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    data = json.loads(tok.to_str())
    data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] not in BYTE_TOKENS]
    return data


def sentencepiece_style(path, data, form):
    """Llama-2's form (Prepend and Replace, no pre-tokenizer; "prepend-unk": without byte fallback,
    so that a run of unknown characters is one <unk>) or a Metaspace form."""
    data = dict(data)
    if form == "prepend-unk":
        data["model"] = dict(data["model"], byte_fallback=False)
    if form in ("prepend", "prepend-unk"):
        data["normalizer"] = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
        data["pre_tokenizer"] = None
    else:
        scheme, split = form
        data["normalizer"] = None
        data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme,
                                 "split": split}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return Tokenizer.from_file(str(path))


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
    return failures == 0 and check_one_document(name, tok, tokenizer_json, eod, work, texts)


def check_one_document(name, tok, tokenizer_json, eod, work, texts):
    """The texts as one document file, read 7 bytes at a time: tokenized in pieces (where the
    tokenizer splits anyway, or for the one-word SentencePiece kinds where no merge crosses the
    cut, the later pieces without Prepend's "▁"), its ids must be those tokenizers gives the
    whole."""
    text = "\n".join(texts)
    (work / f"{name}-one.txt").write_text(text, encoding="utf-8")
    subprocess.run([GPUDAYS, "data", "tokenize", "--tokenizer", str(tokenizer_json), "--eod", eod,
                    "--out", str(work / f"{name}-one"), str(work / f"{name}-one.txt")], check=True,
                   env=dict(os.environ, GPUDAYS_TEST_TOKENIZE_READ_BYTES="7"))
    got = read_megatron(work / f"{name}-one")
    expected = [tok.encode(text, add_special_tokens=False).ids + [tok.token_to_id(eod)]]
    print(f"{name}: one document of {len(text.encode())} bytes in 7-byte reads: "
          f"{'identical' if got == expected else 'DIFFERENT'}")
    return got == expected


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
        llama = LLAMA_TEXTS + kjv_texts()
        styles = [("llama3", LLAMA3_PATTERN, None, ["<|begin_of_text|>", "<|end_of_text|>"], "<|end_of_text|>"),
                  ("qwen2", QWEN2_PATTERN, normalizers.NFC(), ["<|endoftext|>", "<|im_start|>"], "<|endoftext|>"),
                  ("gpt2-split", GPT2_PATTERN, None, ["<|endoftext|>"], "<|endoftext|>")]
        for name, pattern, normalizer, special, eod in styles:
            tok = split_style(work / f"{name}.json", pattern, normalizer, special)
            ok &= check_tokenizer(name, tok, work / f"{name}.json", eod, work, llama)
        words, lines = sentencepiece_model(split=True), sentencepiece_model(split=False)
        for name, model, form in [("llama2", words, "prepend"), ("llama2-unk", words, "prepend-unk"),
                                  ("llama2-lines", lines, "prepend"),
                                  ("metaspace-first", lines, ("first", False)),
                                  ("metaspace-always", lines, ("always", False)),
                                  ("metaspace-never", lines, ("never", False)),
                                  ("metaspace-first-split", words, ("first", True)),
                                  ("metaspace-always-split", lines, ("always", True))]:
            tok = sentencepiece_style(work / f"{name}.json", model, form)
            ok &= check_tokenizer(name, tok, work / f"{name}.json", "</s>", work, llama)
        ok &= check_tokenizer("kjv-genesis-llama", Tokenizer.from_file(str(KJV_LLAMA)), KJV_LLAMA, "</s>", work,
                              llama)
        ok &= check_megatron_writer(work)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
