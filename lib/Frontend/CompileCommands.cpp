//===- CompileCommands.cpp ------------------------------------------------===//
#include "astra/Frontend/CompileCommands.h"

#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;
using namespace clang::tooling;

namespace astra {

static bool isHeader(StringRef Path) {
  StringRef Ext = sys::path::extension(Path);
  return Ext == ".cuh" || Ext == ".h" || Ext == ".hpp" || Ext == ".hh" ||
         Ext == ".inl";
}

namespace {
/// Non-owning view, so the interpolating wrapper can share the database.
class CompilationDatabaseRef : public CompilationDatabase {
public:
  explicit CompilationDatabaseRef(const CompilationDatabase &DB) : DB(DB) {}
  std::vector<CompileCommand> getCompileCommands(StringRef F) const override {
    return DB.getCompileCommands(F);
  }
  std::vector<std::string> getAllFiles() const override {
    return DB.getAllFiles();
  }
  std::vector<CompileCommand> getAllCompileCommands() const override {
    return DB.getAllCompileCommands();
  }

private:
  const CompilationDatabase &DB;
};
} // namespace


Expected<CompileCommands>
CompileCommands::create(StringRef BuildDir, std::vector<std::string> ExtraFlags) {
  CompileCommands CC;
  CC.Extra = std::move(ExtraFlags);
  if (BuildDir.empty())
    return CC;
  std::string Err;
  std::unique_ptr<CompilationDatabase> DB;
  SmallString<256> JsonPath(BuildDir);
  if (sys::fs::is_directory(BuildDir))
    sys::path::append(JsonPath, "compile_commands.json");
  if (!sys::fs::exists(BuildDir))
    Err = "no such directory";
  else if (!sys::fs::exists(JsonPath))
    Err = "no compile_commands.json in it";
  else
    // Loaded without clang's interpolation: a source file the build does not
    // compile is an error, not something to guess flags for.
    DB = JSONCompilationDatabase::loadFromFile(
        JsonPath, Err, JSONCommandLineSyntax::AutoDetect);
  if (!DB)
    return createStringError(inconvertibleErrorCode(),
                             "cannot load a compilation database from '%s': %s",
                             BuildDir.str().c_str(), Err.c_str());
  CC.DB = std::move(DB);
  CC.BuildDir = BuildDir.str();
  return CC;
}

Expected<std::vector<std::string>>
CompileCommands::deviceCommand(StringRef File, const CudaToolchain &TC) const {
  SmallString<256> Abs(File);
  sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  std::vector<std::string> Cmd;
  if (DB) {
    std::vector<CompileCommand> Cmds = DB->getCompileCommands(Abs);
    // Headers are not in any build's database; they borrow the flags of the
    // closest source file, as clangd does.
    if (Cmds.empty() && isHeader(Abs)) {
      if (!Interpolated)
        Interpolated = inferMissingCompileCommands(
            std::make_unique<CompilationDatabaseRef>(*DB));
      Cmds = Interpolated->getCompileCommands(Abs);
    }
    if (Cmds.empty())
      return createStringError(
          inconvertibleErrorCode(),
          "%s: no compile command for this file in the compilation database "
          "at '%s' (add it to the build, or pass its flags after '--')",
          File.str().c_str(), BuildDir.c_str());
    const CompileCommand &C = Cmds.front();
    // Relative include paths in the database are relative to its directory.
    Cmd = C.CommandLine;
    if (!Cmd.empty() && !C.Directory.empty()) {
      std::vector<std::string> Abs2;
      Abs2.push_back(Cmd.front());
      Abs2.push_back("-working-directory=" + C.Directory);
      Abs2.insert(Abs2.end(), Cmd.begin() + 1, Cmd.end());
      Cmd = std::move(Abs2);
    }
    Cmd.insert(Cmd.end(), Extra.begin(), Extra.end());
  } else {
    Cmd.push_back("clang++");
    Cmd.insert(Cmd.end(), Extra.begin(), Extra.end());
    Cmd.push_back(std::string(Abs));
  }
  return makeDeviceCommand(Cmd, Abs, TC);
}

static bool isSourceArg(StringRef A, StringRef File) {
  if (A == File)
    return true;
  SmallString<256> P(A);
  sys::fs::make_absolute(P);
  sys::path::remove_dots(P, true);
  return P == File;
}

std::vector<std::string>
makeDeviceCommand(const std::vector<std::string> &Command, StringRef File,
                  const CudaToolchain &TC, std::vector<std::string> *Notes) {
  std::vector<std::string> Out;
  Out.push_back("clang++");
  for (size_t I = 1; I < Command.size(); ++I) {
    StringRef A = Command[I];
    auto Next = [&]() -> StringRef {
      return I + 1 < Command.size() ? StringRef(Command[++I]) : StringRef();
    };
    // Where the output goes and what depends on it are not ours to decide.
    if (A == "-c" || A == "-S" || A == "-E" || A == "-M" || A == "-MM" ||
        A == "-MD" || A == "-MMD" || A == "-MP" || A == "--cuda-host-only" ||
        A == "--cuda-device-only" || A == "-fsyntax-only")
      continue;
    if (A == "-o" || A == "-MF" || A == "-MT" || A == "-MQ") {
      Next();
      continue;
    }
    if (A.starts_with("-o") || A.starts_with("-MF") ||
        A.starts_with("--cuda-gpu-arch=") || A.starts_with("--offload-arch=") ||
        A.starts_with("--cuda-path=") || A.starts_with("-resource-dir"))
      continue;
    // The device side is always parsed as CUDA, whatever the build said.
    if (A == "-x") {
      Next();
      continue;
    }
    if (A.starts_with("-x"))
      continue;
    if (isSourceArg(A, File))
      continue;
    Out.push_back(A.str());
  }
  for (std::string &F : TC.deviceFlags())
    Out.push_back(std::move(F));
  Out.push_back("-x");
  Out.push_back("cuda");
  Out.push_back(File.str());
  (void)Notes;
  return Out;
}

} // namespace astra
