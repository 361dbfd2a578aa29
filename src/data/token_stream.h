// A token file seen as one stream of tokens (documents back to back, as they were written): the
// Megatron-LM indexed dataset or a flat file of uint16/uint32 tokens. The packed samples of
// samples.h are windows of this stream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/mapped_file.h"
#include "data/megatron_index.h"

namespace gpudays::data {

class TokenStream {
 public:
  virtual ~TokenStream() = default;
  virtual int64_t num_tokens() const = 0;
  virtual int64_t vocab_limit() const = 0;
  // Writes tokens [first, first + count) of the stream into out. Throws InputError naming the
  // file and byte offset for a negative id (a signed dtype).
  virtual void read(int64_t first, int64_t count, int64_t* out) const = 0;
};

// PREFIX.bin + PREFIX.idx, validated (megatron_index.h).
std::unique_ptr<TokenStream> open_megatron_stream(const std::string& prefix);
// A flat file of little-endian tokens; `item_bytes` 2 (uint16) or 4 (uint32).
std::unique_ptr<TokenStream> open_flat_stream(const std::string& path, int item_bytes);

}  // namespace gpudays::data
