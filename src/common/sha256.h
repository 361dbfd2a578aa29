// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: the digest that identifies a
// model in the results database (catalog/model_loader.h: model_digest). Not for secrets.
#pragma once

#include <string>
#include <string_view>

namespace gpudays {

std::string sha256_hex(std::string_view bytes);

}  // namespace gpudays
