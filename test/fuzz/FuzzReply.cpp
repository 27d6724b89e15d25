//===- FuzzReply.cpp - libFuzzer target: LLM replies ----------------------===//
//
// Any bytes as what an LLM server sends back: the chat-completions body
// (parseChatReply) and the message text the coder's code is taken from
// (findCodeBlocks, extractCode). Nothing may crash or hang; code that
// extractCode returns is the code of one of the blocks findCodeBlocks saw.
//
//===----------------------------------------------------------------------===//
#include "astra/LLM/Chat.h"
#include "astra/LLM/CodeExtract.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace astra;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  if (auto R = parseChatReply(Text); !R)
    llvm::consumeError(R.takeError());
  std::vector<CodeBlock> Blocks = findCodeBlocks(Text);
  for (const char *Must : {"", "__global__"}) {
    CodeExtractOptions O;
    O.MustContain = Must;
    auto Code = extractCode(Text, O);
    if (!Code) {
      llvm::consumeError(Code.takeError());
      continue;
    }
    bool Found = false;
    for (const CodeBlock &B : Blocks)
      Found |= B.Code == *Code;
    if (!Found) {
      std::fprintf(stderr, "extractCode returned code that is no block's\n");
      std::abort();
    }
  }
  return 0;
}
