//===- ConfigFile.cpp -----------------------------------------------------===//
#include "ConfigFile.h"
#include "astra/Rewrite/Pass.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

LLVM_YAML_IS_STRING_MAP(std::string)

namespace llvm {
namespace yaml {
template <> struct MappingTraits<astra::tool::RewriteConfig> {
  static void mapping(IO &IO, astra::tool::RewriteConfig &C) {
    IO.mapOptional("Passes", C.Passes);
    IO.mapOptional("PassOptions", C.PassOptions);
    IO.mapOptional("HeaderFilterRegex", C.HeaderFilterRegex);
    IO.mapOptional("ExcludeHeaderFilterRegex", C.ExcludeHeaderFilterRegex);
    IO.mapOptional("FastMath", C.FastMath);
    IO.mapOptional("AllowDouble", C.AllowDouble);
  }
};
} // namespace yaml
} // namespace llvm

namespace astra {
namespace tool {

namespace {
Error configError(StringRef Path, const Twine &What) {
  return createStringError(inconvertibleErrorCode(), Path + ": " + What);
}
} // namespace

Expected<RewriteConfig> readConfigFile(StringRef Path) {
  // A config file is a few lines; a megabyte is not one.
  auto Text = readFile(Path, 1 << 20);
  if (!Text)
    return Text.takeError();
  RewriteConfig C;
  std::string Diag;
  {
    auto OnDiag = [](const SMDiagnostic &D, void *Ctx) {
      std::string &Out = *static_cast<std::string *>(Ctx);
      if (Out.empty())
        Out = (D.getFilename() + ":" + Twine(D.getLineNo()) + ":" +
               Twine(D.getColumnNo() + 1) + ": " + D.getMessage())
                  .str();
    };
    yaml::Input In(MemoryBufferRef(*Text, Path), nullptr, OnDiag, &Diag);
    In >> C;
    if (In.error() && Diag.empty())
      Diag = (Path + ": " + In.error().message()).str();
  }
  if (!Diag.empty())
    return createStringError(inconvertibleErrorCode(),
                             "invalid config file " + Diag);
  if (C.Passes) {
    SmallVector<StringRef, 16> Items;
    StringRef(*C.Passes).split(Items, ',');
    std::vector<std::string> Strs(Items.begin(), Items.end());
    if (auto Sel = selectPasses(Strs); !Sel)
      return configError(Path, "Passes: " + toString(Sel.takeError()));
  }
  if (Error E = checkPassParams(C.PassOptions))
    return configError(Path, "PassOptions: " + toString(std::move(E)));
  for (auto [Key, Re] : {std::pair{"HeaderFilterRegex", &C.HeaderFilterRegex},
                         {"ExcludeHeaderFilterRegex",
                          &C.ExcludeHeaderFilterRegex}}) {
    std::string Why;
    if (*Re && !(*Re)->empty() && !Regex(**Re).isValid(Why))
      return configError(Path, Twine(Key) + ": '" + **Re +
                                   "' is not a regular expression: " + Why);
  }
  C.Source = Path.str();
  return C;
}

Expected<RewriteConfig> configFor(StringRef SourceFile, StringRef Explicit) {
  if (!Explicit.empty())
    return readConfigFile(Explicit);
  SmallString<256> Dir(SourceFile);
  sys::fs::make_absolute(Dir);
  sys::path::remove_dots(Dir, /*remove_dot_dot=*/true);
  sys::path::remove_filename(Dir);
  for (;;) {
    SmallString<256> Candidate(Dir);
    sys::path::append(Candidate, ConfigFileName);
    if (sys::fs::is_regular_file(Candidate))
      return readConfigFile(Candidate);
    StringRef Parent = sys::path::parent_path(Dir);
    if (Parent.empty() || Parent == Dir)
      break;
    Dir = Parent;
  }
  return RewriteConfig();
}

std::string dumpConfig(const RewriteConfig &C) {
  RewriteConfig Out = C;
  std::string S;
  raw_string_ostream OS(S);
  yaml::Output Y(OS);
  Y << Out;
  return S;
}

} // namespace tool
} // namespace astra
