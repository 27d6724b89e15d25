//===- PtxCompiler.cpp - compileToPtx: cache, PCH, compile ----------------===//
//
// The order of things: look the compile up in the PTX cache (no parsing at
// all on a hit); on a miss compile, with the runtime-wrapper PCH when there is
// one (building it on first use), falling back to the plain compile whenever
// the PCH is the problem; then store the PTX with the list of user files the
// compile read.
//
//===----------------------------------------------------------------------===//
#include "astra/Compile/PtxCompiler.h"
#include "ClangDeviceCompile.h"
#include "PtxCache.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Hash.h"
#include "astra/Frontend/KernelModel.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>

using namespace llvm;

namespace astra {

/// The cache directory as given, made absolute: the PCH's stub file is named
/// by it and must be the same path from any working directory.
static std::string chosenCacheDirectory(const CompileOptions &Opts) {
  if (!Opts.CacheDir.empty())
    return Opts.CacheDir;
  return cacheRootDirectory();
}

std::string ptxCacheDirectory(const CompileOptions &Opts) {
  SmallString<256> Dir(chosenCacheDirectory(Opts));
  if (Dir.empty())
    return "";
  sys::fs::make_absolute(Dir);
  sys::path::remove_dots(Dir, /*remove_dot_dot=*/false);
  return std::string(Dir);
}

std::vector<std::string> parsePtxEntries(StringRef Ptx) {
  std::vector<std::string> Entries;
  SmallVector<StringRef, 0> Lines;
  Ptx.split(Lines, '\n');
  for (StringRef L : Lines) {
    L = L.trim();
    if (L.starts_with("//"))
      continue;
    // ".visible .entry NAME(" or ".weak .entry NAME(" (template
    // instantiations); the name may also end the line.
    size_t At = L.find(".entry");
    if (At == StringRef::npos || (At && !isSpace(L[At - 1])))
      continue;
    StringRef Name = L.drop_front(At + 6);
    if (Name.empty() || !isSpace(Name.front()))
      continue;
    Name = Name.ltrim();
    Name = Name.take_until([](char C) { return C == '(' || isSpace(C); });
    if (!Name.empty())
      Entries.push_back(Name.str());
  }
  return Entries;
}

namespace {
/// Diagnostics of a compile that may be retried: held back, then either
/// shown (the result stands) or dropped (the compile is redone without the
/// PCH, which shows its own).
struct HeldDiagnostics {
  explicit HeldDiagnostics(raw_ostream *Final) : Final(Final), OS(Text) {
    if (Final)
      OS.enable_colors(Final->has_colors());
  }
  raw_ostream *stream() { return Final ? &OS : nullptr; }
  void show() {
    if (Final)
      *Final << Text;
  }
  raw_ostream *Final;
  std::string Text;
  raw_string_ostream OS;
};
} // namespace

/// Builds the PCH at \p Pch unless it is there or an earlier build failed
/// (a ".failed" file beside it says why; it is not retried, since a PCH that
/// fails once fails again and every compile would pay for the attempt).
/// Returns whether the PCH can be used.
static bool ensurePch(const DeviceCompileRequest &Compile,
                      const std::string &Pch, std::vector<std::string> &Notes) {
  std::string Failed = Pch + ".failed";
  if (sys::fs::exists(Pch))
    return true;
  if (sys::fs::exists(Failed))
    return false;
  if (std::error_code EC =
          sys::fs::create_directories(sys::path::parent_path(Pch))) {
    Notes.push_back("cannot create the PCH directory: " + EC.message());
    return false;
  }
  auto Start = std::chrono::steady_clock::now();
  DeviceCompileRequest Req;
  Req.Command = Compile.Command;
  Req.Overlay = Compile.Overlay;
  Req.BuildPch = Pch;
  auto Out = runDeviceCompile(Req);
  if (!Out) {
    std::string Why = toString(Out.takeError());
    Notes.push_back("cannot build the CUDA runtime PCH (" + Why +
                    "); compiling without it");
    (void)writeFileAtomically(Failed, Why + "\n");
    return false;
  }
  double S = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           Start)
                 .count();
  Notes.push_back("built the CUDA runtime PCH " + Pch + " in " +
                  std::to_string(S).substr(0, 4) + " s");
  return true;
}

/// True when the first error of a failed compile points into a file the
/// user wrote: then the error is the code's, not the PCH's, and compiling
/// again without the PCH would only say the same thing a second time.
static bool isUserCodeError(const DeviceCompileError &E, const CudaToolchain &TC,
                            StringRef Pch) {
  StringRef F = E.File;
  return !F.empty() && !F.starts_with(Pch) &&
         !F.starts_with(TC.resourceDir()) && !F.starts_with(TC.cudaPath());
}

/// \p Command without warning flags, for cache keys: they never change the
/// code (a -Werror failure is not cached), and `--verbose` turns clang-astra's
/// own -Wunknown-cuda-version on, which must not turn every entry into a
/// miss. -Wp, -Wa and -Wl pass options on and stay.
static std::vector<std::string> keyCommand(ArrayRef<std::string> Command) {
  std::vector<std::string> Out;
  for (const std::string &A : Command) {
    StringRef S(A);
    bool Warning = S == "-w" || (S.starts_with("-W") && !S.starts_with("-Wp,") &&
                                 !S.starts_with("-Wa,") &&
                                 !S.starts_with("-Wl,"));
    if (!Warning)
      Out.push_back(A);
  }
  return Out;
}

namespace {
/// The compile itself, with the runtime PCH when it can be used: everything
/// compileToPtx does between the cache lookup and the store.
class PchCompile {
public:
  PchCompile(const CudaToolchain &TC, const CompileOptions &Opts,
             std::string Dir, std::string Fingerprint, PtxResult &R)
      : TC(TC), Opts(Opts), Dir(std::move(Dir)),
        Fingerprint(std::move(Fingerprint)), R(R) {}

  /// Compiles \p Req; its diagnostics go to \p DiagOS.
  Expected<DeviceCompileOutput> run(DeviceCompileRequest Req,
                                    raw_ostream *DiagOS) {
    Req.DiagOS = DiagOS;
    if (Opts.UsePch && !Dir.empty()) {
      // Everything that shapes the PCH: the command without its main file.
      std::vector<std::string> Flags = keyCommand(Req.Command);
      Flags.pop_back();
      std::string PchKey =
          compileKey(Fingerprint + "pch 2\n", Flags, Opts.OptLevel, "");
      SmallString<256> Pch(Dir);
      sys::path::append(Pch, "pch", PchKey + ".pch");
      if (ensurePch(Req, std::string(Pch), R.Notes)) {
        HeldDiagnostics Held(DiagOS);
        DeviceCompileRequest PchReq = Req;
        PchReq.UsePch = std::string(Pch);
        PchReq.DiagOS = Held.stream();
        auto PchOut = runDeviceCompile(PchReq);
        if (PchOut) {
          Held.show();
          R.UsedPch = true;
          return PchOut;
        }
        Error E = handleErrors(
            PchOut.takeError(),
            [&](std::unique_ptr<DeviceCompileError> DE) -> Error {
              if (isUserCodeError(*DE, TC, Pch))
                return Error(std::move(DE));
              R.Notes.push_back("the CUDA runtime PCH could not be used (" +
                                DE->Message + "); compiling without it");
              // Rebuilt by the next compile; this one may be stale or cut.
              sys::fs::remove(Pch);
              return Error::success();
            });
        if (E) {
          Held.show();
          return std::move(E);
        }
      }
    }
    return runDeviceCompile(Req);
  }

private:
  const CudaToolchain &TC;
  const CompileOptions &Opts;
  std::string Dir, Fingerprint;
  PtxResult &R;
};
} // namespace

/// \p Overlay with every file that exists on disk taken from the disk: the
/// original a candidate was made from.
static FileOverlay withoutDiskFiles(const FileOverlay &Overlay) {
  FileOverlay Out;
  for (const auto &[Path, Text] : Overlay)
    if (!sys::fs::exists(Path))
      Out.emplace(Path, Text);
  return Out;
}

/// The host code the original of a candidate skips, parsed once per command
/// in this process (a run compiles many candidates of one file).
static Expected<std::vector<SkippedHostCode>>
originalSkipped(const std::vector<std::string> &Command,
                const FileOverlay &Overlay) {
  static std::mutex M;
  static std::map<std::string, std::vector<SkippedHostCode>> Known;
  FileOverlay Base = withoutDiskFiles(Overlay);
  std::string Key;
  for (const std::string &A : Command)
    Key += A + '\0';
  for (const auto &[Path, Text] : Base)
    Key += Path + '\0' + sha256Hex(Text) + '\0';
  {
    std::lock_guard<std::mutex> L(M);
    auto It = Known.find(Key);
    if (It != Known.end())
      return It->second;
  }
  ParseOptions PO;
  PO.Overlay = std::move(Base);
  PO.DiagOS = nullptr;
  auto PF = parseCuda(Command, PO);
  if (!PF)
    return PF.takeError();
  std::vector<SkippedHostCode> S = (*PF)->view().Skipped;
  std::lock_guard<std::mutex> L(M);
  Known.emplace(Key, S);
  return S;
}

/// The device view of a compile that failed: the repairs of code nvcc
/// accepts and the stubs of host code clang rejects (CudaParser.h). None
/// when a parse shows that neither helps. A candidate (an overlay) may skip
/// only host code its original skips too: otherwise a rewrite that breaks
/// host code would pass the gate.
static Expected<std::optional<DeviceView>>
deviceViewFor(const std::vector<std::string> &Command,
              const FileOverlay &Overlay) {
  ParseOptions PO;
  PO.Overlay = Overlay;
  PO.DiagOS = nullptr;
  auto PF = parseCuda(Command, PO);
  if (!PF) {
    consumeError(PF.takeError());
    return std::nullopt;
  }
  DeviceView View = (*PF)->view();
  if (View.empty())
    return std::nullopt;
  if (!View.Skipped.empty() && !Overlay.empty()) {
    auto Before = originalSkipped(Command, Overlay);
    if (!Before)
      return Before.takeError();
    std::vector<SkippedHostCode> Added = addedHostErrors(*Before, View.Skipped);
    if (!Added.empty())
      return createStringError(
          inconvertibleErrorCode(),
          "%s: the rewrite breaks host code the original compiles: %s() at "
          "%s: %s",
          Command.back().c_str(), Added.front().Function.c_str(),
          Added.front().Where.c_str(), Added.front().FirstError.c_str());
  }
  return View;
}

std::string parsePch(const CudaToolchain &TC,
                     const std::vector<std::string> &DeviceCommand,
                     const CompileOptions &Opts,
                     std::vector<std::string> &Notes) {
  if (!Opts.UseCache || !Opts.UsePch || DeviceCommand.size() < 2)
    return "";
  std::string Dir = ptxCacheDirectory(Opts);
  if (Dir.empty())
    return "";
  std::vector<std::string> Flags = keyCommand(DeviceCommand);
  Flags.pop_back();
  std::string Key = compileKey(toolchainFingerprint(TC) + "parse-pch 2\n", Flags,
                               /*OptLevel=*/0, "");
  SmallString<256> Pch(Dir);
  sys::path::append(Pch, "pch", Key + ".pch");
  DeviceCompileRequest Req;
  Req.Command = DeviceCommand;
  Req.Overlay = Opts.Overlay;
  if (!ensurePch(Req, std::string(Pch), Notes))
    return "";
  return std::string(Pch);
}

Expected<PtxResult> compileToPtx(const CudaToolchain &TC,
                                 const std::vector<std::string> &DeviceCommand,
                                 const CompileOptions &Opts) {
  if (DeviceCommand.size() < 2)
    return createStringError(inconvertibleErrorCode(),
                             "compileToPtx: empty compile command");
  auto Start = std::chrono::steady_clock::now();
  const std::string &Main = DeviceCommand.back();
  std::vector<std::string> Command = DeviceCommand;
  Command.insert(Command.end() - 1, "-O" + std::to_string(Opts.OptLevel));

  IntrusiveRefCntPtr<vfs::FileSystem> VFS = makeOverlayFileSystem(Opts.Overlay);
  auto MainBuf = VFS->getBufferForFile(Main, -1, false);
  if (!MainBuf)
    return createStringError(MainBuf.getError(), "%s: cannot read: %s",
                             Main.c_str(), MainBuf.getError().message().c_str());

  PtxResult R;
  std::string Dir = Opts.UseCache ? ptxCacheDirectory(Opts) : "";
  if (Opts.UseCache && Dir.empty())
    R.Notes.push_back("no PTX cache: set ASTRA_CACHE_DIR (no home directory)");
  std::optional<PtxCache> Cache;
  std::string Fingerprint, Key;
  if (!Dir.empty()) {
    Cache.emplace(Dir);
    Fingerprint = toolchainFingerprint(TC);
    Key = compileKey(Fingerprint, keyCommand(Command), Opts.OptLevel,
                     (*MainBuf)->getBuffer());
    R.CacheEntry = Cache->entryPath(Key);
    if (auto Hit = Cache->lookup(Key, *VFS, R.Notes)) {
      R.Ptx = std::move(Hit->Ptx);
      R.Warnings = std::move(Hit->Warnings);
      R.Entries = parsePtxEntries(R.Ptx);
      R.FromCache = true;
      return R;
    }
  }

  DeviceCompileRequest Req;
  Req.Command = Command;
  Req.Overlay = Opts.Overlay;
  Req.ShowWarnings = Opts.ShowWarnings;
  Req.CollectDeps = Cache.has_value();

  PchCompile Compile(TC, Opts, Dir, Fingerprint, R);
  HeldDiagnostics Held(Opts.DiagOS);
  auto Out = Compile.run(Req, Held.stream());
  if (!Out) {
    // Code nvcc accepts, or host code clang rejects, may compile through
    // the device view; the first compile's diagnostics are the ones shown
    // when it does not.
    Error First = Out.takeError();
    if (!First.isA<DeviceCompileError>()) {
      Held.show();
      return std::move(First);
    }
    auto View = deviceViewFor(DeviceCommand, Opts.Overlay);
    if (!View) {
      consumeError(std::move(First));
      return View.takeError();
    }
    if (!*View) {
      Held.show();
      return std::move(First);
    }
    DeviceCompileRequest ViewReq = Req;
    ViewReq.Overlay = (*View)->Files;
    ViewReq.Command.insert(ViewReq.Command.end() - 1,
                           (*View)->ExtraFlags.begin(),
                           (*View)->ExtraFlags.end());
    HeldDiagnostics ViewHeld(Opts.DiagOS);
    auto ViewOut = Compile.run(ViewReq, ViewHeld.stream());
    if (!ViewOut) {
      consumeError(ViewOut.takeError());
      Held.show();
      return std::move(First);
    }
    consumeError(std::move(First));
    ViewHeld.show();
    Out = std::move(ViewOut);
    for (const CompatRepair &Rp : (*View)->Repairs)
      R.Notes.push_back("repaired in memory: " + Rp.Where + ": " + Rp.What);
    for (const SkippedHostCode &S : (*View)->Skipped)
      R.Warnings.push_back(describeSkipped(displayPath(Main), S));
    // The cache checks its entry against the files as they are, not as the
    // view changed them.
    for (CacheDep &D : Out->Deps) {
      auto V = (*View)->Files.find(D.Path);
      if (V == (*View)->Files.end())
        continue;
      auto Orig = VFS->getBufferForFile(D.Path, -1, false);
      if (!Orig) {
        Out->DepsIncomplete = true;
        continue;
      }
      D.Hash = sha256Hex((*Orig)->getBuffer());
    }
  } else {
    Held.show();
  }

  R.Ptx = std::move(Out->Ptx);
  R.Entries = parsePtxEntries(R.Ptx);
  R.Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            Start)
                  .count();
  if (Cache) {
    if (Out->DepsIncomplete)
      R.Notes.push_back("not cached: a file the compile read could not be "
                        "hashed");
    else if (Error E = Cache->store(Key, Out->Deps, R.Ptx, R.Warnings))
      R.Notes.push_back("not cached: " + toString(std::move(E)));
  }
  return R;
}

} // namespace astra
