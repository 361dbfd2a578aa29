// BpeModel: a word's first symbols (bytes, or characters with byte fallback and unknown tokens as
// HuggingFace's BPE::merge_word makes them), then the merge loop over a linked list of symbols
// with a min-heap of candidate pairs keyed by (rank, position), so a word of n symbols costs
// O(n log n) even when it is very long.
#include "data/bpe_model.h"

#include <algorithm>
#include <queue>
#include <unordered_set>

#include <fmt/format.h>

#include "common/error.h"
#include "data/byte_level.h"
#include "data/unicode_text.h"

namespace gpudays::data {
namespace {

constexpr size_t kCacheEntries = 1 << 20;  // cleared when full
constexpr size_t kCachedWordBytes = 256;   // longer words are merged every time

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

struct Candidate {
  int32_t rank;
  int32_t position;
  bool operator>(const Candidate& other) const {
    return rank != other.rank ? rank > other.rank : position > other.position;
  }
};

int32_t token_or(const std::unordered_map<std::string, int32_t>& vocab, const std::string& token) {
  const auto found = vocab.find(token);
  return found == vocab.end() ? -1 : found->second;
}

// A merge's left (or right) id -> the id it makes.
using MergeIndex = std::unordered_multimap<int32_t, int32_t>;

// `start` and every id that merges keyed in `index` make from a member, transitively.
std::unordered_set<int32_t> grown(int32_t start, const MergeIndex& index) {
  std::unordered_set<int32_t> ids{start};
  std::vector<int32_t> todo{start};
  while (!todo.empty()) {
    const auto [first, last] = index.equal_range(todo.back());
    todo.pop_back();
    for (auto it = first; it != last; ++it)
      if (ids.insert(it->second).second) todo.push_back(it->second);
  }
  return ids;
}

int32_t left_of(uint64_t key) {
  return static_cast<int32_t>(key >> 32);
}

int32_t right_of(uint64_t key) {
  return static_cast<int32_t>(key & 0xFFFFFFFFu);
}

}  // namespace

BpeModel::BpeModel(BpeModelOptions options) : options_(std::move(options)) {
  if (options_.byte_level) {
    if (options_.byte_fallback)
      throw InputError("byte_fallback with a ByteLevel pre-tokenizer is not supported");
    alphabet_ = byte_level_alphabet();
    for (int byte = 0; byte < 256; ++byte)
      byte_ids_[byte] = token_or(options_.vocab, alphabet_[byte]);
  } else {
    for (const auto& [token, id] : options_.vocab) {
      char32_t c = 0;
      if (!token.empty() && first_invalid_utf8(token) < 0 &&
          static_cast<size_t>(decode_utf8(token, 0, c)) == token.size())
        char_ids_.emplace(c, id);
    }
    for (int byte = 0; byte < 256; ++byte) {
      const std::string token = fmt::format("<0x{:02X}>", byte);
      byte_ids_[byte] = token_or(options_.vocab, token);
      if (options_.byte_fallback && byte_ids_[byte] < 0)
        throw InputError(fmt::format(
            "byte_fallback needs the 256 tokens <0x00> to <0xFF>; the vocabulary lacks {}", token));
    }
  }
  merges_.reserve(options_.merges.size());
  for (size_t rank = 0; rank < options_.merges.size(); ++rank) {
    const auto& [left, right] = options_.merges[rank];
    const auto l = options_.vocab.find(left), r = options_.vocab.find(right);
    const auto m = options_.vocab.find(left + right);
    if (l == options_.vocab.end() || r == options_.vocab.end() || m == options_.vocab.end())
      throw InputError(fmt::format(
          "merge {} ('{}' '{}') names a token the vocabulary lacks", rank, left, right));
    merges_.emplace(pair_key(l->second, r->second), Merge{static_cast<int32_t>(rank), m->second});
  }
}

const BpeModel::Merge* BpeModel::find_merge(int32_t left, int32_t right) const {
  const auto found = merges_.find(pair_key(left, right));
  return found == merges_.end() ? nullptr : &found->second;
}

void BpeModel::initial_symbols(std::string_view bytes, std::vector<int32_t>& id) const {
  bool in_unknown = false;  // the last symbol is an unknown one's
  for (size_t at = 0; at < bytes.size();) {
    int32_t symbol = byte_ids_[static_cast<unsigned char>(bytes[at])];
    size_t length = 1;
    if (!options_.byte_level) {
      char32_t c = 0;
      length = static_cast<size_t>(decode_utf8(bytes, at, c));
      const auto found = char_ids_.find(c);
      symbol = found == char_ids_.end() ? -1 : found->second;
      if (symbol < 0 && options_.byte_fallback) {  // every <0xXX> is there (the constructor checks)
        for (size_t k = at; k < at + length; ++k)
          id.push_back(byte_ids_[static_cast<unsigned char>(bytes[k])]);
        in_unknown = false;
        at += length;
        continue;
      }
    }
    at += length;
    if (symbol >= 0) {
      id.push_back(symbol);
      in_unknown = false;
    } else if (options_.unk_id >= 0) {  // no unknown token: the symbol is dropped
      if (!(in_unknown && options_.fuse_unk)) id.push_back(options_.unk_id);
      in_unknown = true;
    }
  }
}

std::vector<int32_t> BpeModel::known_symbols(std::string_view character) const {
  char32_t c = 0;
  decode_utf8(character, 0, c);
  if (options_.byte_level || (!char_ids_.contains(c) && !options_.byte_fallback)) return {};
  std::vector<int32_t> ids;
  initial_symbols(character, ids);
  return ids;
}

// Inside one word, the symbol that starts the text after a cut only grows by merging with its
// right neighbour and the one that ends the text before it with its left neighbour, until a merge
// joins the two; merges elsewhere run as in either half alone (lowest rank, then leftmost, keeps
// each half's order). So the halves are never joined when no merge pairs an id the last symbol
// can become with one the first can become.
std::string BpeModel::lefts_never_joined(std::string_view ascii_lefts,
                                         std::string_view right) const {
  std::string never;
  const std::vector<int32_t> right_symbols = known_symbols(right);
  if (options_.ignore_merges || right_symbols.empty()) return never;
  MergeIndex by_left, by_right;
  for (const auto& [key, merge] : merges_) {
    by_left.emplace(left_of(key), merge.merged_id);
    by_right.emplace(right_of(key), merge.merged_id);
  }
  const std::unordered_set<int32_t> firsts = grown(right_symbols.front(), by_left);
  std::unordered_set<int32_t> joinable;  // the left ids of merges whose right id is in firsts
  for (const auto& [key, merge] : merges_)
    if (firsts.contains(right_of(key))) joinable.insert(left_of(key));
  for (const char c : ascii_lefts) {
    const std::vector<int32_t> symbols = known_symbols(std::string_view(&c, 1));
    if (symbols.empty()) continue;
    const std::unordered_set<int32_t> lasts = grown(symbols.back(), by_right);
    if (std::none_of(lasts.begin(), lasts.end(), [&](int32_t id) { return joinable.contains(id); }))
      never.push_back(c);
  }
  return never;
}

void BpeModel::merge_word(std::string_view bytes, std::vector<int32_t>& out) const {
  std::vector<int32_t> id, prev, next;
  initial_symbols(bytes, id);
  const int32_t n = static_cast<int32_t>(id.size());
  for (int32_t i = 0; i < n; ++i) {
    prev.push_back(i - 1);
    next.push_back(i + 1 < n ? i + 1 : -1);
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  for (int32_t i = 0; i + 1 < n; ++i)
    if (const Merge* m = find_merge(id[i], id[i + 1])) queue.push({m->rank, i});
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    const int32_t i = top.position, j = next[i];
    if (id[i] < 0 || j < 0) continue;  // merged away since
    const Merge* m = find_merge(id[i], id[j]);
    if (m == nullptr || m->rank != top.rank) continue;  // the pair changed since
    id[i] = m->merged_id;
    id[j] = -1;
    next[i] = next[j];
    if (next[i] >= 0) prev[next[i]] = i;
    if (prev[i] >= 0)
      if (const Merge* left = find_merge(id[prev[i]], id[i])) queue.push({left->rank, prev[i]});
    if (next[i] >= 0)
      if (const Merge* right = find_merge(id[i], id[next[i]])) queue.push({right->rank, i});
  }
  for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = next[i]) out.push_back(id[i]);
}

void BpeModel::encode_word(std::string_view bytes, std::vector<int64_t>& ids) const {
  if (options_.ignore_merges) {
    std::string token(options_.byte_level ? std::string_view() : bytes);  // the word as a token
    if (options_.byte_level)
      for (const char c : bytes) token += alphabet_[static_cast<unsigned char>(c)];
    if (const auto found = options_.vocab.find(token); found != options_.vocab.end()) {
      ids.push_back(found->second);
      return;
    }
  }
  const bool cacheable = bytes.size() <= kCachedWordBytes;
  if (cacheable) {
    if (const auto hit = cache_.find(std::string(bytes)); hit != cache_.end()) {
      ids.insert(ids.end(), hit->second.begin(), hit->second.end());
      return;
    }
  }
  std::vector<int32_t> word;
  merge_word(bytes, word);
  ids.insert(ids.end(), word.begin(), word.end());
  if (cacheable) {
    if (cache_.size() >= kCacheEntries) cache_.clear();
    cache_.emplace(std::string(bytes), std::move(word));
  }
}

}  // namespace gpudays::data
