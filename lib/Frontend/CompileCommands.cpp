//===- CompileCommands.cpp ------------------------------------------------===//
#include "astra/Frontend/CompileCommands.h"

#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"

#include <optional>
#include <set>

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
  // `--driver-mode=nvcc` says what the flags are; without it they are nvcc's
  // when one of them is a flag only nvcc has (-arch=sm_90, --use_fast_math).
  std::optional<bool> Mode;
  for (auto It = ExtraFlags.begin(); It != ExtraFlags.end();) {
    StringRef A = *It;
    if (A.consume_front("--driver-mode=")) {
      if (A != "nvcc" && A != "gcc" && A != "g++" && A != "cpp" &&
          A != "cl" && A != "clang" && A != "clang++")
        return createStringError(inconvertibleErrorCode(),
                                 "unknown --driver-mode '%s' after '--' "
                                 "(expected nvcc, clang or g++)",
                                 A.str().c_str());
      Mode = A == "nvcc";
      It = ExtraFlags.erase(It);
      continue;
    }
    ++It;
  }
  CC.ExtraAreNvcc = Mode ? *Mode : looksLikeNvccFlags(ExtraFlags);
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
  std::string Abs = absolutePath(File);
  std::vector<std::string> Notes;
  auto Cmd = buildCommand(File, Abs, Notes);
  if (!Cmd)
    return Cmd.takeError();
  std::vector<std::string> Out = makeDeviceCommand(*Cmd, Abs, TC, &Notes);
  if (OnNote && !Notes.empty() && Noted->insert(Abs).second)
    for (const std::string &N : Notes)
      OnNote(Abs, N);
  return Out;
}

Expected<std::optional<std::vector<std::string>>>
CompileCommands::nvccFlags(StringRef File) const {
  std::string Abs = absolutePath(File);
  std::vector<std::string> Notes;
  auto Cmd = buildCommand(File, Abs, Notes);
  if (!Cmd)
    return Cmd.takeError();
  if (isNvccCommand(Cmd->front()))
    return nvccDeviceFlags(*Cmd, Abs);
  if (ExtraAreNvcc) {
    std::vector<std::string> Nv = {"nvcc"};
    Nv.insert(Nv.end(), Extra.begin(), Extra.end());
    return nvccDeviceFlags(Nv, Abs);
  }
  return std::nullopt;
}

std::string CompileCommands::absolutePath(StringRef File) {
  SmallString<256> Abs(File);
  sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  return std::string(Abs);
}

Expected<std::vector<std::string>>
CompileCommands::buildCommand(StringRef File, StringRef Abs,
                              std::vector<std::string> &Notes) const {
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
      // The interpolator rewrites the borrowed command with clang's option
      // table, which garbles nvcc's (`--options-file F` loses F). Borrow the
      // source's command as the build wrote it instead, with the header in
      // place of the source.
      StringRef From;
      if (!Cmds.empty())
        From = StringRef(Cmds.front().Heuristic);
      if (From.consume_front("inferred from ")) {
        std::vector<CompileCommand> Orig = DB->getCompileCommands(From);
        if (!Orig.empty()) {
          CompileCommand C = Orig.front();
          auto AbsIn = [&](StringRef P) {
            SmallString<256> R(P);
            if (sys::path::is_relative(R) && !C.Directory.empty()) {
              R = C.Directory;
              sys::path::append(R, P);
            }
            sys::path::remove_dots(R, true);
            return std::string(R);
          };
          std::string Src = AbsIn(C.Filename);
          for (size_t I = 1; I < C.CommandLine.size(); ++I)
            if (AbsIn(C.CommandLine[I]) == Src)
              C.CommandLine[I] = std::string(Abs);
          C.Filename = std::string(Abs);
          Cmds = {C};
        }
      }
    }
    if (Cmds.empty())
      return createStringError(
          inconvertibleErrorCode(),
          "%s: no compile command for this file in the compilation database "
          "at '%s' (add it to the build, or pass its flags after '--')",
          File.str().c_str(), BuildDir.c_str());
    const CompileCommand &C = Cmds.front();
    // CMake writes nvcc's include paths into --options-file .rsp files in
    // some generators; they are read relative to the entry's directory.
    auto Expanded = expandResponseFiles(C.CommandLine, C.Directory);
    if (!Expanded)
      return createStringError(inconvertibleErrorCode(),
                               "%s: the compile command in '%s' cannot be "
                               "read: %s",
                               File.str().c_str(), BuildDir.c_str(),
                               toString(Expanded.takeError()).c_str());
    // Relative include paths in the database are relative to its directory.
    Cmd = std::move(*Expanded);
    if (!Cmd.empty() && !C.Directory.empty()) {
      std::vector<std::string> Abs2;
      Abs2.push_back(Cmd.front());
      Abs2.push_back("-working-directory=" + C.Directory);
      Abs2.insert(Abs2.end(), Cmd.begin() + 1, Cmd.end());
      Cmd = std::move(Abs2);
    }
    Cmd.insert(Cmd.end(), Extra.begin(), Extra.end());
    if (ExtraAreNvcc && !isNvccCommand(Cmd.front())) {
      // nvcc flags after `--` on a clang entry: translated on their own.
      Cmd.resize(Cmd.size() - Extra.size());
      std::vector<std::string> Nv = {"nvcc"};
      Nv.insert(Nv.end(), Extra.begin(), Extra.end());
      std::vector<std::string> T = translateNvccFlags(Nv, Abs, Notes);
      Cmd.insert(Cmd.end(), T.begin() + 1, T.end());
    }
  } else {
    // Flags after `--` alone are the command: nvcc's when they are.
    Cmd.push_back(ExtraAreNvcc ? "nvcc" : "clang++");
    Cmd.insert(Cmd.end(), Extra.begin(), Extra.end());
    Cmd.push_back(Abs.str());
  }
  return Cmd;
}

/// A database entry names its source relative to the entry's directory
/// (`-working-directory=` once the command is built), not to the process's.
static bool isSourceArg(StringRef A, StringRef File, StringRef WorkDir) {
  if (A == File)
    return true;
  SmallString<256> P(A);
  if (!WorkDir.empty())
    sys::path::make_absolute(WorkDir, P);
  else
    sys::fs::make_absolute(P);
  sys::path::remove_dots(P, true);
  return P == File;
}

static StringRef workingDirectoryOf(const std::vector<std::string> &Command) {
  for (StringRef A : Command)
    if (A.consume_front("-working-directory="))
      return A;
  return {};
}

bool isNvccCommand(StringRef Argv0) {
  StringRef Base = sys::path::filename(Argv0, sys::path::Style::posix);
  // A Windows path in a database written on Windows.
  Base = Base.rsplit('\\').second.empty() ? Base : Base.rsplit('\\').second;
  return Base.equals_insensitive("nvcc") ||
         Base.equals_insensitive("nvcc.exe");
}

Expected<std::vector<std::string>>
expandResponseFiles(const std::vector<std::string> &Command,
                    StringRef Directory) {
  // Far more than any build writes; a file that includes itself gets there.
  const unsigned MaxExpansions = 256;
  auto Resolve = [&](StringRef Name) {
    SmallString<256> P(Name);
    if (!Directory.empty() && sys::path::is_relative(P)) {
      P = Directory;
      sys::path::append(P, Name);
    }
    return std::string(P);
  };
  auto ReadTokens = [&](StringRef Name, std::vector<std::string> &Into,
                        unsigned Count) -> Error {
    std::string Path = Resolve(Name);
    auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/true);
    if (!Buf)
      return createStringError(Buf.getError(),
                               "cannot read the response file '%s': %s",
                               Path.c_str(), Buf.getError().message().c_str());
    if (Count > MaxExpansions)
      return createStringError(inconvertibleErrorCode(),
                               "more than %u response files expanded at '%s' "
                               "(does one include itself?)",
                               MaxExpansions, Path.c_str());
    BumpPtrAllocator Alloc;
    StringSaver Saver(Alloc);
    SmallVector<const char *, 32> Toks;
    cl::TokenizeGNUCommandLine((*Buf)->getBuffer(), Saver, Toks);
    for (const char *T : Toks)
      Into.push_back(T);
    return Error::success();
  };
  std::vector<std::string> Work(Command.begin(), Command.end());
  bool Nvcc = !Command.empty() && isNvccCommand(Command.front());
  // Expanded in place until no response file is left; each expansion is
  // counted so that a file including itself ends with an error.
  unsigned Expansions = 0;
  for (size_t I = 0; I < Work.size(); ++I) {
    StringRef A = Work[I];
    std::string FileName;
    size_t Consumed = 1;
    if (I > 0 && A.size() > 1 && A.front() == '@') {
      FileName = A.drop_front().str();
    } else if (Nvcc && I > 0 &&
               (A == "--options-file" || A == "-optf")) {
      if (I + 1 >= Work.size())
        return createStringError(inconvertibleErrorCode(),
                                 "'%s' at the end of the command names no "
                                 "file",
                                 A.str().c_str());
      FileName = Work[I + 1];
      Consumed = 2;
    } else if (Nvcc && I > 0 && (A.starts_with("--options-file=") ||
                                 A.starts_with("-optf="))) {
      FileName = A.split('=').second.str();
    } else {
      continue;
    }
    // nvcc's --options-file takes a comma-separated list of files.
    SmallVector<StringRef, 2> Names;
    if (Nvcc && A.front() != '@')
      StringRef(FileName).split(Names, ',', -1, /*KeepEmpty=*/false);
    else
      Names.push_back(FileName);
    std::vector<std::string> Toks;
    for (StringRef N : Names)
      if (Error E = ReadTokens(N, Toks, ++Expansions))
        return E;
    Work.erase(Work.begin() + I, Work.begin() + I + Consumed);
    Work.insert(Work.begin() + I, Toks.begin(), Toks.end());
    --I; // Look at the first expanded token again: it may be a file too.
  }
  return Work;
}

namespace {
/// What to do with one nvcc option.
enum class NvccKind {
  Arch,        ///< -arch: a virtual or real arch, or a list
  Gencode,     ///< -gencode arch=...,code=...
  Code,        ///< -code
  HostOptions, ///< -Xcompiler: comma-separated host compiler flags
  Rdc,         ///< -rdc=true|false
  DeviceC,     ///< -dc: -rdc=true -c
  FastMath,    ///< --use_fast_math
  Ftz,         ///< --ftz=true|false
  Fmad,        ///< --fmad=true|false
  Std,         ///< --std c++17
  Define,      ///< -D NAME / --define-macro
  Undefine,    ///< -U / --undefine-macro
  Include,     ///< -I / --include-path
  System,      ///< -isystem / --system-include
  PreInclude,  ///< -include / --pre-include
  DefaultStream, ///< --default-stream legacy|per-thread|null
  Optimize,    ///< --optimize N
  Keep,        ///< a flag clang takes as it is
  KeepValue,   ///< ...with its value, as the next argument
  Drop,        ///< a flag without a value that clang does not need
  DropValue,   ///< a flag whose value (joined or next) goes with it
};

struct NvccOption {
  NvccKind Kind;
  /// Why it is dropped, for --verbose.
  const char *Why = "";
};
} // namespace

/// nvcc's options by name (without a joined `=value`). Long and short
/// spellings are both listed; nvcc accepts `-name value`, `-name=value`,
/// `--name value` and `--name=value` for every option that takes a value.
static const NvccOption *lookupNvcc(StringRef Name) {
  using K = NvccKind;
  static const std::pair<const char *, NvccOption> Table[] = {
      {"-arch", {K::Arch}},
      {"--gpu-architecture", {K::Arch}},
      {"-gencode", {K::Gencode}},
      {"--generate-code", {K::Gencode}},
      {"-code", {K::Code}},
      {"--gpu-code", {K::Code}},
      {"-Xcompiler", {K::HostOptions}},
      {"--compiler-options", {K::HostOptions}},
      {"-rdc", {K::Rdc}},
      {"--relocatable-device-code", {K::Rdc}},
      {"-dc", {K::DeviceC}},
      {"--device-c", {K::DeviceC}},
      {"-use_fast_math", {K::FastMath}},
      {"--use_fast_math", {K::FastMath}},
      {"-use-fast-math", {K::FastMath}},
      {"--use-fast-math", {K::FastMath}},
      {"-ftz", {K::Ftz}},
      {"--ftz", {K::Ftz}},
      {"-fmad", {K::Fmad}},
      {"--fmad", {K::Fmad}},
      {"-std", {K::Std}},
      {"--std", {K::Std}},
      {"-D", {K::Define}},
      {"--define-macro", {K::Define}},
      {"-U", {K::Undefine}},
      {"--undefine-macro", {K::Undefine}},
      {"-I", {K::Include}},
      {"--include-path", {K::Include}},
      {"-isystem", {K::System}},
      {"--system-include", {K::System}},
      {"-include", {K::PreInclude}},
      {"--pre-include", {K::PreInclude}},
      {"-default-stream", {K::DefaultStream}},
      {"--default-stream", {K::DefaultStream}},
      {"--optimize", {K::Optimize}},
      {"-w", {K::Keep}},
      {"--disable-warnings", {K::Keep}},
      {"-m64", {K::Keep}},
      // Output and dependency flags; makeDeviceCommand's clang filter drops
      // them after translation.
      {"-c", {K::Keep}},
      {"--compile", {K::Drop, "the device command compiles anyway"}},
      {"-MD", {K::Keep}},
      {"-MMD", {K::Keep}},
      {"-MP", {K::Keep}},
      {"-o", {K::KeepValue}},
      {"-MF", {K::KeepValue}},
      {"-MT", {K::KeepValue}},
      {"--output-file", {K::DropValue, "output file"}},
      {"--dependency-output", {K::DropValue, "dependency file"}},
      {"--generate-dependencies-with-compile", {K::Drop, "dependency file"}},
      {"--generate-nonsystem-dependencies-with-compile",
       {K::Drop, "dependency file"}},
      {"-x", {K::DropValue, "the device side is always parsed as CUDA"}},
      {"--x", {K::DropValue, "the device side is always parsed as CUDA"}},
      {"--expt-relaxed-constexpr",
       {K::Drop, "clang lets constexpr functions cross host and device by "
                 "default"}},
      {"-expt-relaxed-constexpr",
       {K::Drop, "clang lets constexpr functions cross host and device by "
                 "default"}},
      {"--expt-extended-lambda",
       {K::Drop, "clang takes __device__ lambdas without a flag"}},
      {"-expt-extended-lambda",
       {K::Drop, "clang takes __device__ lambdas without a flag"}},
      {"--extended-lambda",
       {K::Drop, "clang takes __device__ lambdas without a flag"}},
      {"-extended-lambda",
       {K::Drop, "clang takes __device__ lambdas without a flag"}},
      {"-lineinfo",
       {K::Drop, "line tables do not change the code that is parsed, "
                 "compiled or timed"}},
      {"--generate-line-info",
       {K::Drop, "line tables do not change the code that is parsed, "
                 "compiled or timed"}},
      {"-G", {K::Drop, "device debug code is not what the build ships "
                       "optimized; the gate compiles at -O3"}},
      {"--device-debug", {K::Drop, "device debug code is not what the build "
                                   "ships optimized; the gate compiles at "
                                   "-O3"}},
      {"-g", {K::Drop, "host debug information"}},
      {"--debug", {K::Drop, "host debug information"}},
      {"-ccbin", {K::DropValue, "the host compiler is nvcc's"}},
      {"--compiler-bindir", {K::DropValue, "the host compiler is nvcc's"}},
      {"-t", {K::DropValue, "nvcc's own parallelism"}},
      {"--threads", {K::DropValue, "nvcc's own parallelism"}},
      {"-split-compile", {K::DropValue, "nvcc's own parallelism"}},
      {"--split-compile", {K::DropValue, "nvcc's own parallelism"}},
      {"-Xptxas", {K::DropValue, "ptxas options"}},
      {"--ptxas-options", {K::DropValue, "ptxas options"}},
      {"-Xnvlink", {K::DropValue, "nvlink options"}},
      {"--nvlink-options", {K::DropValue, "nvlink options"}},
      {"-Xcudafe", {K::DropValue, "options of nvcc's front end"}},
      {"-Xfatbin", {K::DropValue, "fatbinary options"}},
      {"--fatbin-options", {K::DropValue, "fatbinary options"}},
      {"-Xarchive", {K::DropValue, "archiver options"}},
      {"--archive-options", {K::DropValue, "archiver options"}},
      {"-Xlinker", {K::DropValue, "linker options"}},
      {"--linker-options", {K::DropValue, "linker options"}},
      {"-L", {K::DropValue, "linker options"}},
      {"--library-path", {K::DropValue, "linker options"}},
      {"-l", {K::DropValue, "linker options"}},
      {"--library", {K::DropValue, "linker options"}},
      {"-cudart", {K::DropValue, "the CUDA runtime linked"}},
      {"--cudart", {K::DropValue, "the CUDA runtime linked"}},
      {"-cudadevrt", {K::DropValue, "the CUDA runtime linked"}},
      {"--cudadevrt", {K::DropValue, "the CUDA runtime linked"}},
      {"-odir", {K::DropValue, "output directory"}},
      {"--output-directory", {K::DropValue, "output directory"}},
      {"-keep-dir", {K::DropValue, "nvcc's intermediate files"}},
      {"--keep-dir", {K::DropValue, "nvcc's intermediate files"}},
      {"-keep", {K::Drop, "nvcc's intermediate files"}},
      {"--keep", {K::Drop, "nvcc's intermediate files"}},
      {"-save-temps", {K::Drop, "nvcc's intermediate files"}},
      {"--save-temps", {K::Drop, "nvcc's intermediate files"}},
      {"-res-usage", {K::Drop, "ptxas reporting"}},
      {"--resource-usage", {K::Drop, "ptxas reporting"}},
      {"-src-in-ptx", {K::Drop, "PTX annotation"}},
      {"--source-in-ptx", {K::Drop, "PTX annotation"}},
      {"-Werror", {K::DropValue, "nvcc's warning kinds"}},
      {"--Werror", {K::DropValue, "nvcc's warning kinds"}},
      {"-Wno-deprecated-gpu-targets", {K::Drop, "nvcc's warning kinds"}},
      {"--Wno-deprecated-gpu-targets", {K::Drop, "nvcc's warning kinds"}},
      {"-Wno-deprecated-declarations", {K::Drop, "nvcc's warning kinds"}},
      {"--Wno-deprecated-declarations", {K::Drop, "nvcc's warning kinds"}},
      {"-Wreorder", {K::Drop, "nvcc's warning kinds"}},
      {"--Wreorder", {K::Drop, "nvcc's warning kinds"}},
      {"-Wext-lambda-captures-this", {K::Drop, "nvcc's warning kinds"}},
      {"--Wext-lambda-captures-this", {K::Drop, "nvcc's warning kinds"}},
      {"-W", {K::Drop, "nvcc's warning kinds"}},
      {"-diag-suppress", {K::DropValue, "nvcc's diagnostic numbers"}},
      {"--diag-suppress", {K::DropValue, "nvcc's diagnostic numbers"}},
      {"-diag_suppress", {K::DropValue, "nvcc's diagnostic numbers"}},
      {"--diag_suppress", {K::DropValue, "nvcc's diagnostic numbers"}},
      {"--diag-warn", {K::DropValue, "nvcc's diagnostic numbers"}},
      {"--diag-error", {K::DropValue, "nvcc's diagnostic numbers"}},
      {"--diag-default", {K::DropValue, "nvcc's diagnostic numbers"}},
      {"--display-error-number", {K::Drop, "nvcc's diagnostic numbers"}},
      {"--no-display-error-number", {K::Drop, "nvcc's diagnostic numbers"}},
      {"-forward-unknown-to-host-compiler",
       {K::Drop, "nvcc's handling of host flags"}},
      {"--forward-unknown-to-host-compiler",
       {K::Drop, "nvcc's handling of host flags"}},
      {"-forward-unknown-opts", {K::Drop, "nvcc's handling of host flags"}},
      {"--forward-unknown-opts", {K::Drop, "nvcc's handling of host flags"}},
      {"-allow-unsupported-compiler",
       {K::Drop, "nvcc's host compiler check"}},
      {"--allow-unsupported-compiler",
       {K::Drop, "nvcc's host compiler check"}},
      {"-maxrregcount", {K::DropValue, "a ptxas register limit"}},
      {"--maxrregcount", {K::DropValue, "a ptxas register limit"}},
      {"-prec-div", {K::DropValue, "nvcc's division precision"}},
      {"--prec-div", {K::DropValue, "nvcc's division precision"}},
      {"-prec-sqrt", {K::DropValue, "nvcc's square root precision"}},
      {"--prec-sqrt", {K::DropValue, "nvcc's square root precision"}},
      {"-restrict", {K::Drop, "nvcc's pointer aliasing assumption"}},
      {"--restrict", {K::Drop, "nvcc's pointer aliasing assumption"}},
      {"-shared", {K::Drop, "linker options"}},
      {"--shared", {K::Drop, "linker options"}},
      {"-static-global-template-stub",
       {K::DropValue, "nvcc's host stub layout"}},
      {"--static-global-template-stub",
       {K::DropValue, "nvcc's host stub layout"}},
  };
  for (const auto &[N, O] : Table)
    if (Name == N)
      return &O;
  return nullptr;
}

/// The nvcc option argument \p A spells: `-name`, `-name=value`, then the
/// joined short forms (-DNAME=1, -Ipath). \p Name is the option's name and
/// \p Joined its value when it is part of \p A (\p HasJoined).
static const NvccOption *lookupNvccArg(StringRef A, StringRef &Name,
                                       StringRef &Joined, bool &HasJoined) {
  Name = A;
  Joined = "";
  HasJoined = false;
  if (const NvccOption *O = lookupNvcc(A))
    return O;
  if (A.contains('=')) {
    std::tie(Name, Joined) = A.split('=');
    if (const NvccOption *O = lookupNvcc(Name)) {
      HasJoined = true;
      return O;
    }
    Name = A;
    Joined = "";
  }
  for (StringRef Short : {"-isystem", "-D", "-U", "-I", "-L", "-l"})
    if (A.size() > Short.size() && A.starts_with(Short)) {
      Name = Short;
      Joined = A.drop_front(Short.size());
      HasJoined = true;
      return lookupNvcc(Name);
    }
  return nullptr;
}

/// nvcc option names that take a value (so `-name value` consumes the next
/// argument).
static bool takesValue(NvccKind K) {
  switch (K) {
  case NvccKind::Keep:
  case NvccKind::Drop:
  case NvccKind::DeviceC:
  case NvccKind::FastMath:
    return false;
  default:
    return true;
  }
}

bool looksLikeNvccFlags(const std::vector<std::string> &Flags) {
  for (StringRef A : Flags) {
    if (!A.starts_with("-"))
      continue;
    const NvccOption *O = lookupNvcc(A.split('=').first);
    if (!O)
      continue;
    switch (O->Kind) {
    case NvccKind::Arch:
    case NvccKind::Gencode:
    case NvccKind::Code:
    case NvccKind::HostOptions:
    case NvccKind::Rdc:
    case NvccKind::DeviceC:
    case NvccKind::FastMath:
    case NvccKind::Ftz:
    case NvccKind::Fmad:
    case NvccKind::DefaultStream:
      return true;
    default:
      break;
    }
    // Options of nvcc's other tools and nvcc-only spellings; none of them
    // is a clang flag.
    StringRef Name = A.split('=').first;
    if (Name.starts_with("-X") || Name.starts_with("--expt-") ||
        Name.starts_with("-expt-") || Name == "-lineinfo" ||
        Name == "--generate-line-info" || Name == "--extended-lambda" ||
        Name == "-extended-lambda" || Name == "-ccbin" ||
        Name == "--compiler-bindir" || Name == "--options-file" ||
        Name == "-optf" || Name == "--std" || Name == "--ptxas-options" ||
        Name == "--compiler-options")
      return true;
  }
  return false;
}

/// Adds the arch names of one nvcc arch value (`sm_90`, `compute_90`,
/// `[compute_90,sm_90]`, `"sm_80,sm_90"`, `arch=compute_90,code=sm_90`) to
/// \p Real (sm_XX) and \p Virtual (compute_XX, as sm_XX).
static void collectArches(StringRef V, std::vector<std::string> &Real,
                          std::vector<std::string> &Virtual) {
  SmallVector<StringRef, 8> Parts;
  size_t Begin = 0;
  for (size_t I = 0; I <= V.size(); ++I)
    if (I == V.size() || StringRef(",[]\"'= ").contains(V[I])) {
      if (I > Begin)
        Parts.push_back(V.slice(Begin, I));
      Begin = I + 1;
    }
  for (StringRef P : Parts) {
    if (P.starts_with("sm_")) {
      if (isValidGpuArch(P))
        Real.push_back(P.str());
    } else if (P.starts_with("compute_") || P.starts_with("lto_")) {
      std::string S = ("sm_" + P.split('_').second).str();
      if (isValidGpuArch(S))
        Virtual.push_back(S);
    }
  }
}

static unsigned archNumber(StringRef A) {
  A.consume_front("sm_");
  unsigned V = 0;
  A.take_while([](char C) { return isDigit(C); }).getAsInteger(10, V);
  return V;
}

std::vector<std::string>
buildGpuArches(const std::vector<std::string> &Command) {
  std::vector<std::string> Real, Virtual;
  bool Nvcc = !Command.empty() && isNvccCommand(Command.front());
  for (size_t I = 1; I < Command.size(); ++I) {
    StringRef A = Command[I];
    if (A.consume_front("--cuda-gpu-arch=") ||
        A.consume_front("--offload-arch=")) {
      collectArches(A, Real, Virtual);
      continue;
    }
    if (!Nvcc || !A.starts_with("-"))
      continue;
    auto [Name, Joined] = A.split('=');
    const NvccOption *O = lookupNvcc(Name);
    if (!O || (O->Kind != NvccKind::Arch && O->Kind != NvccKind::Gencode &&
               O->Kind != NvccKind::Code)) {
      if (O && takesValue(O->Kind) && !A.contains('=') && !Name.empty())
        ++I; // Skip the value so it is not taken for an option.
      continue;
    }
    StringRef V = A.contains('=') ? Joined
                                  : (I + 1 < Command.size()
                                         ? StringRef(Command[++I])
                                         : StringRef());
    collectArches(V, Real, Virtual);
  }
  std::vector<std::string> &Out = Real.empty() ? Virtual : Real;
  std::vector<std::string> Unique;
  for (std::string &A : Out)
    if (!is_contained(Unique, A))
      Unique.push_back(std::move(A));
  return Unique;
}

std::string gpuArchForBuild(StringRef Arch,
                            const std::vector<std::string> &BuildArches) {
  // `a` (arch-specific) features are a superset of `f` (family) ones.
  std::string Best = Arch.str();
  for (const std::string &B : BuildArches) {
    if (archNumber(B) != archNumber(Arch))
      continue;
    StringRef Suffix = StringRef(B).drop_while([](char C) {
      return C != '_';
    }).drop_front().drop_while(isDigit);
    StringRef BestSuffix = StringRef(Best).drop_front(3).drop_while(isDigit);
    if (Suffix == "a" || (Suffix == "f" && BestSuffix.empty()))
      Best = B;
  }
  return Best;
}

/// Host compiler flags from -Xcompiler that change what the translation unit
/// means (clang parses host and device code in one pass, and the host code's
/// macros and includes must be there). Everything else (warnings,
/// optimization, code generation, -fPIC) is for the host object only.
static void translateHostFlags(StringRef List, std::vector<std::string> &Out,
                               std::vector<std::string> &Notes) {
  SmallVector<StringRef, 8> Flags;
  List.split(Flags, ',', -1, /*KeepEmpty=*/false);
  for (size_t I = 0; I < Flags.size(); ++I) {
    StringRef F = Flags[I].trim().trim('"');
    static const char *ParseFlags[] = {
        "-fsigned-char",   "-funsigned-char",  "-fno-signed-char",
        "-fno-unsigned-char", "-fms-extensions", "-fno-ms-extensions",
        "-fchar8_t",       "-fno-char8_t",     "-fgnu-keywords",
        "-fno-gnu-keywords"};
    if ((F.starts_with("-D") || F.starts_with("-U") || F.starts_with("-I")) &&
        F.size() > 2) {
      Out.push_back(F.str());
    } else if ((F == "-D" || F == "-U" || F == "-I" || F == "-isystem" ||
                F == "-include") &&
               I + 1 < Flags.size()) {
      Out.push_back(F.str());
      Out.push_back(Flags[++I].trim().trim('"').str());
    } else if (F.starts_with("-std=") ||
               F.starts_with("-isystem") || F.starts_with("-include") ||
               is_contained(ParseFlags, F)) {
      Out.push_back(F.str());
    } else {
      Notes.push_back(("dropped host compiler flag '" + F +
                       "' (from -Xcompiler): it affects the host object only")
                          .str());
    }
  }
}

/// Rewrites an nvcc command line (argv[0] first) as clang flags. Output and
/// dependency flags are kept in clang's spelling for the common filter to
/// drop; every flag dropped here gets a note.
std::vector<std::string>
translateNvccFlags(const std::vector<std::string> &Command, StringRef File,
                   std::vector<std::string> &Notes) {
  std::vector<std::string> Out;
  Out.push_back(Command.front());
  bool FastMath = false, Ftz = false, FmadOff = false;
  auto IsTrue = [](StringRef V) {
    return V.equals_insensitive("true") || V == "1";
  };
  for (size_t I = 1; I < Command.size(); ++I) {
    StringRef A = Command[I];
    if (A.starts_with("-working-directory=")) {
      Out.push_back(A.str());
      continue;
    }
    if (!A.starts_with("-")) {
      if (!isSourceArg(A, File, workingDirectoryOf(Command)))
        Notes.push_back(("dropped '" + A +
                         "': nvcc compiles one source file per command")
                            .str());
      else
        Out.push_back(A.str());
      continue;
    }
    // `-name`, `-name=value`, then the joined short forms -DNAME=1, -Ipath.
    StringRef Name, Joined;
    bool HasJoined = false;
    const NvccOption *O = lookupNvccArg(A, Name, Joined, HasJoined);
    if (!O && (A.starts_with("-O") && A.size() == 3)) {
      Out.push_back(A.str());
      continue;
    }
    if (!O && A.starts_with("-Werror")) {
      Notes.push_back(("dropped nvcc flag '" + A + "': nvcc's warning kinds")
                          .str());
      continue;
    }
    if (!O) {
      Notes.push_back(("dropped unknown nvcc flag '" + A + "'").str());
      continue;
    }
    StringRef V = Joined;
    if (!HasJoined && takesValue(O->Kind)) {
      if (I + 1 >= Command.size()) {
        Notes.push_back(("dropped nvcc flag '" + A + "': it has no value")
                            .str());
        continue;
      }
      V = Command[++I];
    }
    std::string Shown = HasJoined || !takesValue(O->Kind)
                            ? A.str()
                            : (A + " " + V).str();
    switch (O->Kind) {
    case NvccKind::Arch:
    case NvccKind::Gencode:
    case NvccKind::Code:
      // Collected by buildGpuArch; the arch is added once at the end.
      break;
    case NvccKind::HostOptions:
      translateHostFlags(V, Out, Notes);
      break;
    case NvccKind::Rdc:
      if (IsTrue(V))
        Out.push_back("-fgpu-rdc");
      break;
    case NvccKind::DeviceC:
      Out.push_back("-fgpu-rdc");
      break;
    case NvccKind::FastMath:
      FastMath = true;
      break;
    case NvccKind::Ftz:
      Ftz = IsTrue(V);
      break;
    case NvccKind::Fmad:
      FmadOff = !IsTrue(V);
      break;
    case NvccKind::Std:
      Out.push_back(("-std=" + V).str());
      break;
    case NvccKind::Define:
      Out.push_back(("-D" + V).str());
      break;
    case NvccKind::Undefine:
      Out.push_back(("-U" + V).str());
      break;
    case NvccKind::Include:
      Out.push_back(("-I" + V).str());
      break;
    case NvccKind::System:
      Out.push_back("-isystem");
      Out.push_back(V.str());
      break;
    case NvccKind::PreInclude:
      Out.push_back("-include");
      Out.push_back(V.str());
      break;
    case NvccKind::DefaultStream:
      if (V == "per-thread" || V == "legacy")
        Out.push_back(("-fgpu-default-stream=" + V).str());
      else
        Notes.push_back("dropped nvcc flag '" + Shown +
                        "': clang knows only legacy and per-thread");
      break;
    case NvccKind::Optimize:
      Out.push_back(("-O" + V).str());
      break;
    case NvccKind::Keep:
      Out.push_back(A.str());
      break;
    case NvccKind::KeepValue:
      Out.push_back(Name.str());
      Out.push_back(V.str());
      break;
    case NvccKind::Drop:
    case NvccKind::DropValue:
      Notes.push_back("dropped nvcc flag '" + Shown + "': " + O->Why);
      break;
    }
  }
  // nvcc's --use_fast_math is --ftz=true --prec-div=false --prec-sqrt=false
  // --fmad=true plus the fast intrinsics for sinf, expf, ...; it does not
  // assume that NaNs and infinities are absent, so clang's -ffast-math minus
  // finite-math-only is the closest match.
  if (FastMath) {
    for (const char *F : {"-ffast-math", "-fno-finite-math-only",
                          "-fgpu-approx-transcendentals"})
      Out.push_back(F);
    Ftz = true;
  }
  if (Ftz)
    Out.push_back("-fcuda-flush-denormals-to-zero");
  if (FmadOff)
    Out.push_back("-ffp-contract=off");
  return Out;
}

std::vector<std::string> nvccDeviceFlags(const std::vector<std::string> &Command,
                                         StringRef File) {
  std::vector<std::string> Out;
  for (size_t I = 1; I < Command.size(); ++I) {
    StringRef A = Command[I];
    if (A.starts_with("-working-directory=") || !A.starts_with("-"))
      continue; // The source, or an input the timing build does not take.
    StringRef Name, Joined;
    bool HasJoined = false;
    const NvccOption *O = lookupNvccArg(A, Name, Joined, HasJoined);
    if (!O) {
      // -O3 is the device command's; anything else nvcc knows and this
      // table does not goes to nvcc as it is.
      if (!(A.starts_with("-O") && A.size() == 3))
        Out.push_back(A.str());
      continue;
    }
    std::string Value;
    bool Separate = !HasJoined && takesValue(O->Kind);
    if (Separate) {
      if (I + 1 >= Command.size())
        continue;
      Value = Command[++I];
    }
    auto Keep = [&] {
      Out.push_back(A.str());
      if (Separate)
        Out.push_back(Value);
    };
    switch (O->Kind) {
    case NvccKind::FastMath:
    case NvccKind::Ftz:
    case NvccKind::Fmad:
    case NvccKind::Rdc:
    case NvccKind::DefaultStream:
      Keep();
      break;
    case NvccKind::DeviceC:
      Out.push_back("-rdc=true");
      break;
    case NvccKind::Drop:
    case NvccKind::DropValue: {
      // What shapes the device code or lets it compile; not outputs, the
      // host compiler, parallelism, linking or warnings as errors (a
      // candidate may warn where the original did not).
      static const char *Device[] = {
          "-Xptxas", "--ptxas-options", "-lineinfo", "--generate-line-info",
          "-G", "--device-debug", "--expt-relaxed-constexpr",
          "-expt-relaxed-constexpr", "--expt-extended-lambda",
          "-expt-extended-lambda", "--extended-lambda", "-extended-lambda",
          "-Xcudafe", "-maxrregcount", "--maxrregcount", "-prec-div",
          "--prec-div", "-prec-sqrt", "--prec-sqrt", "-restrict",
          "--restrict", "-diag-suppress", "--diag-suppress",
          "-diag_suppress", "--diag_suppress", "-allow-unsupported-compiler",
          "--allow-unsupported-compiler", "-static-global-template-stub",
          "--static-global-template-stub"};
      if (is_contained(Device, Name))
        Keep();
      break;
    }
    default:
      // -D, -I, -std, ... come from the device command; the arch is the
      // timing build's; outputs and dependency files are not wanted.
      break;
    }
  }
  (void)File;
  return Out;
}

std::vector<std::string>
makeDeviceCommand(const std::vector<std::string> &Command, StringRef File,
                  const CudaToolchain &TC, std::vector<std::string> *Notes) {
  std::vector<std::string> Dropped;
  std::vector<std::string> Input = Command;
  std::string Arch = TC.gpuArch().str();
  if (!Command.empty() && isNvccCommand(Command.front())) {
    Input = translateNvccFlags(Command, File, Dropped);
    // The code is parsed for the GPU it will run on (or what the user
    // typed), not for the newest arch of a build that targets many: an
    // sm_120a build path is not what an H100 runs. The build's list only
    // adds its `a`/`f` suffix to that arch, as nvcc compiles it.
    std::vector<std::string> BuildArches = buildGpuArches(Command);
    if (!BuildArches.empty()) {
      std::string List = join(BuildArches, ", ");
      if (TC.gpuArchIsExplicit()) {
        if (!is_contained(BuildArches, Arch))
          Dropped.push_back("the build compiles for " + List +
                            "; parsing for " + Arch + " (--cuda-gpu-arch)");
      } else {
        std::string Chosen = gpuArchForBuild(Arch, BuildArches);
        Dropped.push_back("GPU arch " + Chosen + " (" +
                          TC.gpuArchOrigin().str() +
                          (Chosen != Arch
                               ? ", " + Arch + ", with the build's suffix"
                               : std::string()) +
                          "); the build compiles for " + List);
        Arch = Chosen;
      }
    }
  }
  std::vector<std::string> Out;
  StringRef WorkDir = workingDirectoryOf(Input);
  Out.push_back("clang++");
  // nvcc's implicit include folders, macros and headers come before the
  // build's flags, as nvcc's own do: a build's -include sees them.
  for (std::string &F : TC.nvccCompatFlags())
    Out.push_back(std::move(F));
  for (size_t I = 1; I < Input.size(); ++I) {
    StringRef A = Input[I];
    auto Next = [&]() -> StringRef {
      return I + 1 < Input.size() ? StringRef(Input[++I]) : StringRef();
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
    if (isSourceArg(A, File, WorkDir))
      continue;
    Out.push_back(A.str());
  }
  for (std::string &F : TC.deviceFlags()) {
    if (StringRef(F).starts_with("--cuda-gpu-arch="))
      F = "--cuda-gpu-arch=" + Arch;
    Out.push_back(std::move(F));
  }
  Out.push_back("-x");
  Out.push_back("cuda");
  Out.push_back(File.str());
  if (Notes)
    Notes->insert(Notes->end(), Dropped.begin(), Dropped.end());
  return Out;
}

std::vector<std::string> CompileCommands::databaseSources() const {
  std::set<std::string> Out;
  if (!DB)
    return {};
  for (const CompileCommand &C : DB->getAllCompileCommands()) {
    SmallString<256> P(C.Filename);
    if (!sys::path::is_absolute(P))
      sys::path::make_absolute(C.Directory, P);
    sys::path::remove_dots(P, /*remove_dot_dot=*/true);
    bool Nvcc = !C.CommandLine.empty() && isNvccCommand(C.CommandLine[0]);
    if (Nvcc || sys::path::extension(P).equals_insensitive(".cu"))
      Out.insert(std::string(P));
  }
  return std::vector<std::string>(Out.begin(), Out.end());
}

} // namespace astra
