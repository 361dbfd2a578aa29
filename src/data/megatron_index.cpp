// Parsing, validation and writing of the Megatron-LM index (layout in megatron_index.h).
#include "data/megatron_index.h"

#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays::data {
namespace {

constexpr char kMagic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', '\0', '\0'};

template <typename T>
T load_le(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));  // the format is little-endian, as is every target we build
  return value;
}

[[noreturn]] void fail(const std::string& path, int64_t offset, const std::string& what) {
  throw InputError(fmt::format("{}: offset {}: {}", path, offset, what));
}

void check_counts(int64_t idx_bytes,
                  const std::string& path,
                  uint64_t sequences,
                  uint64_t documents) {
  const uint64_t room = static_cast<uint64_t>(idx_bytes - kIndexHeaderBytes);
  if (sequences > room / 12 || documents > room / 8)
    fail(path,
         18,
         fmt::format("{} sequences and {} documents do not fit in a {}-byte index",
                     sequences,
                     documents,
                     idx_bytes));
  const uint64_t needed = kIndexHeaderBytes + 12 * sequences + 8 * documents;
  if (static_cast<uint64_t>(idx_bytes) != needed &&
      static_cast<uint64_t>(idx_bytes) != needed + sequences)
    fail(path,
         static_cast<int64_t>(std::min<uint64_t>(needed, idx_bytes)),
         fmt::format("index is {} bytes; {} sequences and {} documents need {} (or {} with modes)",
                     idx_bytes,
                     sequences,
                     documents,
                     needed,
                     needed + sequences));
}

void check_sequences(const MegatronIndex& index,
                     const std::string& idx_path,
                     int64_t bin_bytes,
                     const std::string& bin_path) {
  const int64_t count = static_cast<int64_t>(index.sequence_lengths.size());
  const int64_t pointers_at = kIndexHeaderBytes + 4 * count;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t length = index.sequence_lengths[i];
    const int64_t pointer = index.sequence_pointers[i];
    if (length < 0)
      fail(idx_path,
           kIndexHeaderBytes + 4 * i,
           fmt::format("sequence {} has negative length {}", i, length));
    if (pointer < 0 || pointer % index.dtype.item_bytes != 0 || pointer > bin_bytes ||
        length * index.dtype.item_bytes > bin_bytes - pointer)
      fail(idx_path,
           pointers_at + 8 * i,
           fmt::format("sequence {} ({} tokens at byte {} of {}) lies outside its {}-byte file",
                       i,
                       length,
                       pointer,
                       bin_path,
                       bin_bytes));
  }
}

void check_documents(const MegatronIndex& index, const std::string& path) {
  const int64_t count = static_cast<int64_t>(index.sequence_lengths.size());
  const int64_t at = kIndexHeaderBytes + 12 * count;
  const auto& docs = index.document_indices;
  if (docs.empty() || docs.front() != 0) fail(path, at, "the document indices must start at 0");
  for (size_t d = 1; d < docs.size(); ++d)
    if (docs[d] < docs[d - 1] || docs[d] > count)
      fail(path,
           at + 8 * static_cast<int64_t>(d),
           fmt::format("document index {} is {}; indices rise from 0 to {}", d, docs[d], count));
  if (docs.back() != count)
    fail(path,
         at + 8 * static_cast<int64_t>(docs.size() - 1),
         fmt::format(
             "the last document index is {}, not the sequence count {}", docs.back(), count));
}

}  // namespace

TokenDtype token_dtype_from_code(uint8_t code, const std::string& path, int64_t offset) {
  switch (code) {
    case 1:
      return {1, "uint8", 1, false, 256};
    case 2:
      return {2, "int8", 1, true, 128};
    case 3:
      return {3, "int16", 2, true, 32768};
    case 4:
      return {4, "int32", 4, true, int64_t{1} << 31};
    case 5:
      return {5, "int64", 8, true, std::numeric_limits<int64_t>::max()};
    case 8:
      return {8, "uint16", 2, false, 65536};
    case 6:
    case 7:
      fail(path, offset, fmt::format("dtype code {} is a float type, not tokens", code));
    default:
      fail(path, offset, fmt::format("unknown dtype code {}; valid: 1 to 8", code));
  }
}

TokenDtype token_dtype_for_vocab(int64_t vocab_size) {
  return token_dtype_from_code(vocab_size <= 65536 ? 8 : 4, "", 0);
}

MegatronIndex parse_megatron_index(const uint8_t* idx,
                                   int64_t idx_bytes,
                                   const std::string& idx_path,
                                   int64_t bin_bytes,
                                   const std::string& bin_path) {
  if (idx_bytes < kIndexHeaderBytes)
    fail(idx_path,
         idx_bytes,
         fmt::format("truncated: {} bytes, the header alone is {}", idx_bytes, kIndexHeaderBytes));
  if (std::memcmp(idx, kMagic, sizeof(kMagic)) != 0)
    fail(idx_path, 0, "wrong magic; not a Megatron-LM index (expected MMIDIDX\\0\\0)");
  const uint64_t version = load_le<uint64_t>(idx + 9);
  if (version != 1) fail(idx_path, 9, fmt::format("version {} (only 1 is defined)", version));
  MegatronIndex index;
  index.dtype = token_dtype_from_code(idx[17], idx_path, 17);
  const uint64_t sequences = load_le<uint64_t>(idx + 18);
  const uint64_t documents = load_le<uint64_t>(idx + 26);
  check_counts(idx_bytes, idx_path, sequences, documents);
  const int64_t n = static_cast<int64_t>(sequences);
  index.sequence_lengths.resize(n);
  index.sequence_pointers.resize(n);
  index.document_indices.resize(documents);
  if (n > 0) {  // memcpy from an empty vector's null data() is undefined, even for 0 bytes
    std::memcpy(index.sequence_lengths.data(), idx + kIndexHeaderBytes, 4 * n);
    std::memcpy(index.sequence_pointers.data(), idx + kIndexHeaderBytes + 4 * n, 8 * n);
  }
  if (documents > 0)
    std::memcpy(index.document_indices.data(), idx + kIndexHeaderBytes + 12 * n, 8 * documents);
  check_sequences(index, idx_path, bin_bytes, bin_path);
  check_documents(index, idx_path);
  return index;
}

MegatronWriter::MegatronWriter(const std::string& prefix, TokenDtype dtype)
    : prefix_(prefix), dtype_(dtype), bin_(std::make_unique<AtomicFile>(prefix + ".bin")) {}

namespace {

void append_token(int64_t token, int64_t item_bytes, std::vector<uint8_t>& out) {
  const size_t at = out.size();
  out.resize(at + static_cast<size_t>(item_bytes));
  if (item_bytes == 1) {
    out[at] = static_cast<uint8_t>(token);
  } else if (item_bytes == 2) {
    const uint16_t v = static_cast<uint16_t>(token);
    std::memcpy(out.data() + at, &v, 2);
  } else if (item_bytes == 4) {
    const int32_t v = static_cast<int32_t>(token);
    std::memcpy(out.data() + at, &v, 4);
  } else {
    std::memcpy(out.data() + at, &token, 8);
  }
}

}  // namespace

void MegatronWriter::add_document(const std::vector<int64_t>& tokens) {
  add_tokens(tokens);
  end_document();
}

void MegatronWriter::add_tokens(const std::vector<int64_t>& tokens) {
  if (static_cast<uint64_t>(document_tokens_) + tokens.size() >
      static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    throw InputError(
        fmt::format("a document of more than {} tokens is longer than the format's "
                    "2^31 - 1",
                    document_tokens_));
  }
  for (const int64_t token : tokens) {
    if (token < 0 || token >= dtype_.vocab_limit)
      throw InputError(fmt::format("token {} does not fit the dtype {}", token, dtype_.name));
    append_token(token, dtype_.item_bytes, pending_);
  }
  if (pending_.size() >= (size_t{1} << 20)) flush_pending();
  document_tokens_ += static_cast<int64_t>(tokens.size());
  tokens_ += static_cast<int64_t>(tokens.size());
}

void MegatronWriter::end_document() {
  sequence_lengths_.push_back(static_cast<int32_t>(document_tokens_));
  document_tokens_ = 0;
}

void MegatronWriter::flush_pending() {
  if (!pending_.empty()) bin_->write(pending_.data(), pending_.size());
  pending_.clear();
}

void MegatronWriter::finish() {
  if (!bin_) return;
  flush_pending();
  const uint64_t n = sequence_lengths_.size();
  std::vector<int64_t> pointers(n), documents(n + 1);
  int64_t at = 0;
  for (uint64_t i = 0; i < n; ++i) {
    pointers[i] = at;
    at += sequence_lengths_[i] * dtype_.item_bytes;
    documents[i + 1] = static_cast<int64_t>(i + 1);
  }
  AtomicFile idx(prefix_ + ".idx");
  const uint64_t version = 1, document_count = n + 1;
  idx.write(kMagic, 9);
  idx.write(&version, 8);
  idx.write(&dtype_.code, 1);
  idx.write(&n, 8);
  idx.write(&document_count, 8);
  idx.write(sequence_lengths_.data(), 4 * n);
  idx.write(pointers.data(), 8 * n);
  idx.write(documents.data(), 8 * (n + 1));
  bin_->commit();
  bin_.reset();
  idx.commit();
}

}  // namespace gpudays::data
