//===- FuzzExpr.cpp - libFuzzer target: spec expressions ------------------===//
//
// Any bytes as an expression (and as a generator, `normal(...)`): parsing
// must answer with a tree or an error, never crash or recurse off the
// stack; an accepted expression evaluates to a value or an error under a
// few environments, and its text parses again to an expression over the
// same variables.
//
//===----------------------------------------------------------------------===//
#include "astra/Spec/Expr.h"
#include "astra/Spec/Spec.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace astra;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  if (auto G = parseGenerator(Text); !G)
    llvm::consumeError(G.takeError());
  auto E = SpecExpr::parse(Text);
  if (!E) {
    llvm::consumeError(E.takeError());
    return 0;
  }
  auto Again = SpecExpr::parse(E->text());
  if (!Again || Again->variables() != E->variables()) {
    std::fprintf(stderr, "'%s' parsed, but its text does not parse again "
                         "to the same variables\n",
                 E->text().c_str());
    std::abort();
  }
  const int64_t Values[] = {0, 1, -1, 7, 1024, INT64_MAX, INT64_MIN};
  for (int64_t V : Values) {
    Env Vars;
    for (const std::string &Name : E->variables())
      Vars[Name] = Value::ofInt(V);
    if (auto R = E->eval(Vars); !R)
      llvm::consumeError(R.takeError());
    if (auto I = E->evalInt(Vars); !I)
      llvm::consumeError(I.takeError());
  }
  return 0;
}
