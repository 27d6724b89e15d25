//===- FuzzSpec.cpp - libFuzzer target: spec files ------------------------===//
//
// Any bytes as a spec file: the reader must answer with a spec or errors,
// never crash, hang or grow without bound (the limits of
// astra/Spec/Spec.h). A spec it accepts must survive writing and reading
// back (writeKernelSpecJson / parseKernelSpecJson, how jobs ship it).
//
//===----------------------------------------------------------------------===//
#include "astra/Spec/Spec.h"
#include "astra/Support/Json.h"

#include <cstdint>
#include <cstdlib>
#include <cstdio>

using namespace astra;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  auto Spec = parseSpec(Text, "fuzz.astra.json");
  if (!Spec) {
    llvm::consumeError(Spec.takeError());
    return 0;
  }
  for (const KernelSpec &K : Spec->Kernels) {
    std::string Json;
    {
      JsonWriter W;
      writeKernelSpecJson(W, K);
      Json = W.str();
    }
    auto Back = parseKernelSpecJson(Json, K.Kernel, "fuzz-roundtrip.json");
    if (!Back) {
      std::fprintf(stderr, "a spec entry the reader accepted does not read "
                           "back after writing:\n%s\n%s\n",
                   Json.c_str(), llvm::toString(Back.takeError()).c_str());
      std::abort();
    }
  }
  return 0;
}
