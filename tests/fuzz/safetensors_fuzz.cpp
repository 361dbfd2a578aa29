// Fuzz target: the safetensors reader (models/safetensors.h; LibTorch), as checkpoint loading uses
// it: open a file, validate its header, read every tensor. A bug is any escape other than
// InputError (a LibTorch error, a JSON error, a filesystem error), any sanitizer report, or a
// tensor read back with another size than its header's byte range.
#include "fuzz_util.h"
#include "models/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudays;
  const std::string path = fuzz::write_input(data, size, "model.safetensors");
  fuzz::accepts([&] {
    const models::SafetensorsReader reader(path);
    for (const auto& [name, entry] : reader.entries()) {
      const at::Tensor t = reader.read(name);
      if (static_cast<uint64_t>(t.numel() * t.element_size()) != entry.end - entry.begin) {
        fuzz::fail("a tensor's size differs from its header's byte range");
      }
    }
  });
  return 0;
}
