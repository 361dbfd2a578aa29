// `gpudays data ...`: tokenize text into a Megatron-LM dataset, pack a folder of images, and
// inspect either (what the trainer will see: tokens, documents, samples, the held-out split).
// Parsing and printing only; the work is in src/data.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "data/image_pack.h"
#include "data/samples.h"
#include "data/tokenize_files.h"

namespace gpudays {
namespace {

struct InspectRequest {
  std::string path;
  int64_t seq_len = 2048;
  double eval_fraction = 0.01;
  bool images = false;
  int64_t sample = -1;  // print this sample's tokens (or label) too
};

// "1 sample", "2 samples"; "1 class", "2 classes".
std::string counted(int64_t n, const std::string& noun) {
  if (n == 1) return fmt::format("1 {}", noun);
  return fmt::format("{} {}{}", n, noun, noun.ends_with('s') ? "es" : "s");
}

// Test-only (docs/data.md): GPUDAYS_TEST_TOKENIZE_READ_BYTES=N reads one-document files N bytes
// at a time, so that a small file is tokenized in many pieces (tests/datasets/parity.py).
void run_tokenize(data::TokenizeOptions options) {
  if (const char* bytes = std::getenv("GPUDAYS_TEST_TOKENIZE_READ_BYTES")) {
    options.read_bytes = std::clamp<size_t>(std::strtoull(bytes, nullptr, 10), 1, size_t{1} << 30);
  }
  const data::TokenizeSummary s = data::tokenize_files(options);
  std::cout << fmt::format(
      "wrote {}.bin and {}.idx: {}, {} ({}), {:.1f} MB of text in {:.2f} s ({:.2f} MB/s)\n",
      options.out_prefix,
      options.out_prefix,
      counted(s.documents, "document"),
      counted(s.tokens, "token"),
      s.dtype,
      s.text_bytes / 1e6,
      s.seconds,
      s.seconds > 0 ? s.text_bytes / 1e6 / s.seconds : 0.0);
}

void run_inspect(const InspectRequest& r) {
  if (r.images) {
    const auto images = data::open_image_samples(r.path);
    const data::Split split = data::split_samples(images->num_samples(), r.eval_fraction);
    std::cout << fmt::format(
        "{}: {} of {}x{}x{} (channels x height x width), {}; {} train, {} held out\n",
        r.path,
        counted(images->num_samples(), "image"),
        images->channels(),
        images->height(),
        images->width(),
        counted(images->num_classes(), "class"),
        split.train_samples,
        split.eval_samples);
    if (r.sample >= 0) {
      std::vector<uint8_t> pixels(images->channels() * images->height() * images->width());
      std::cout << fmt::format(
          "sample {}: label {}\n", r.sample, images->read_sample(r.sample, pixels.data()));
    }
    return;
  }
  const auto samples = data::open_token_samples(r.path, r.seq_len);
  const data::Split split = data::split_samples(samples->num_samples(), r.eval_fraction);
  std::cout << fmt::format("{}: {} of {} + 1 tokens, ids below {}; {} train, {} held out\n",
                           r.path,
                           counted(samples->num_samples(), "sample"),
                           r.seq_len,
                           samples->vocab_limit(),
                           split.train_samples,
                           split.eval_samples);
  if (r.sample >= 0) {
    std::vector<int64_t> tokens(samples->sample_tokens());
    samples->read_sample(r.sample, tokens.data());
    std::cout << fmt::format("sample {}: [{}]\n", r.sample, fmt::join(tokens, ", "));
  }
}

void add_tokenize(CLI::App& data_cmd) {
  auto r = std::make_shared<data::TokenizeOptions>();
  CLI::App* cmd = data_cmd.add_subcommand(
      "tokenize",
      "Tokenize text files with a BPE tokenizer.json into PREFIX.bin + PREFIX.idx (Megatron-LM "
      "indexed format), each document ending in the end-of-document token.");
  cmd->add_option("--tokenizer", r->tokenizer_path, "HuggingFace tokenizer.json (docs/data.md)")
      ->required();
  cmd->add_option("--out", r->out_prefix, "Output prefix (writes PREFIX.bin and PREFIX.idx)")
      ->required();
  cmd->add_option("--eod", r->eod_token, "End-of-document token")->capture_default_str();
  cmd->add_option("inputs",
                  r->inputs,
                  "Text files (one document each) or .jsonl files (one document per line, its "
                  "\"text\")")
      ->required();
  auto held_mib = std::make_shared<int64_t>(static_cast<int64_t>(r->max_held_bytes >> 20));
  cmd->add_option("--max-held-mib",
                  *held_mib,
                  "The most text of one document held at once, in MiB: a stretch with no place "
                  "to cut (docs/data.md) or a .jsonl line; tokenizing takes about 20 times it "
                  "in memory")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16))
      ->capture_default_str();
  cmd->callback([r, held_mib] {
    r->max_held_bytes = static_cast<size_t>(*held_mib) << 20;
    run_tokenize(*r);
  });
}

void add_images(CLI::App& data_cmd) {
  auto r = std::make_shared<data::ImagePackOptions>();
  CLI::App* cmd = data_cmd.add_subcommand(
      "images",
      "Pack a folder of JPEG/PNG images, one subfolder per class, into one file of uint8 RGB "
      "images resized (shorter side) and centre-cropped to --size, with labels.");
  cmd->add_option("--in", r->folder, "Folder with one subfolder of images per class")->required();
  cmd->add_option("--out", r->out_path, "Packed image file to write")->required();
  cmd->add_option("--size", r->size_px, "Side of the square images in pixels")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  cmd->add_option("--seed", r->seed, "Seed of the order the images are written in")
      ->capture_default_str();
  cmd->callback([r] {
    const data::ImagePackSummary s = data::pack_images(*r);
    std::cout << fmt::format("wrote {}: {} of {}x{} in {}\n",
                             r->out_path,
                             counted(s.images, "image"),
                             r->size_px,
                             r->size_px,
                             counted(s.classes, "class"));
    if (s.upscaled > 0) {
      std::cout << fmt::format(
          "note: images with a shorter side under {} px were enlarged to it: {} of {} (they "
          "carry less detail than their size says; a smaller --size keeps their own)\n",
          r->size_px,
          s.upscaled,
          s.images);
    }
  });
}

void add_inspect(CLI::App& data_cmd) {
  auto r = std::make_shared<InspectRequest>();
  CLI::App* cmd = data_cmd.add_subcommand(
      "inspect",
      "Open a token dataset (PREFIX of .bin/.idx, or a .u16/.u32 flat file) or, with --images, a "
      "packed image file, validate it and print what the trainer would see.");
  cmd->add_option("path", r->path, "Dataset prefix or file")->required();
  cmd->add_option("--seq-len", r->seq_len, "Sequence length of the samples")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd->add_option("--eval-fraction", r->eval_fraction, "Fraction held out for evaluation")
      ->capture_default_str()
      ->check(number_check(0.0, 0.99, /*low_open=*/false));
  cmd->add_flag("--images", r->images, "The path is a packed image file");
  cmd->add_option("--sample", r->sample, "Also print this sample's tokens (or its label)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([r] { run_inspect(*r); });
}

}  // namespace

void add_data_commands(CLI::App& app, const GlobalOptions& global) {
  CLI::App* data_cmd =
      app.add_subcommand("data", "Prepare training data: tokenize text, pack images, inspect.");
  data_cmd->require_subcommand(1);
  add_tokenize(*data_cmd);
  add_images(*data_cmd);
  add_inspect(*data_cmd);
}

}  // namespace gpudays
