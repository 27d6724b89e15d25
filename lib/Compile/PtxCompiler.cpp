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

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <chrono>
#include <cstdlib>

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
  std::string Key = compileKey(toolchainFingerprint(TC) + "parse-pch\n", Flags,
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
    if (auto Ptx = Cache->lookup(Key, *VFS, R.Notes)) {
      R.Ptx = std::move(*Ptx);
      R.Entries = parsePtxEntries(R.Ptx);
      R.FromCache = true;
      return R;
    }
  }

  DeviceCompileRequest Req;
  Req.Command = Command;
  Req.Overlay = Opts.Overlay;
  Req.DiagOS = Opts.DiagOS;
  Req.ShowWarnings = Opts.ShowWarnings;
  Req.CollectDeps = Cache.has_value();

  std::optional<DeviceCompileOutput> Out;
  if (Opts.UsePch && Cache) {
    // Everything that shapes the PCH: the command without its main file.
    std::vector<std::string> Flags = keyCommand(Command);
    Flags.pop_back();
    std::string PchKey =
        compileKey(Fingerprint + "pch\n", Flags, Opts.OptLevel, "");
    SmallString<256> Pch(Dir);
    sys::path::append(Pch, "pch", PchKey + ".pch");
    if (ensurePch(Req, std::string(Pch), R.Notes)) {
      HeldDiagnostics Held(Opts.DiagOS);
      DeviceCompileRequest PchReq = Req;
      PchReq.UsePch = std::string(Pch);
      PchReq.DiagOS = Held.stream();
      auto PchOut = runDeviceCompile(PchReq);
      if (PchOut) {
        Held.show();
        Out = std::move(*PchOut);
        R.UsedPch = true;
      } else {
        Error E = handleErrors(
            PchOut.takeError(), [&](std::unique_ptr<DeviceCompileError> DE) -> Error {
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
          return E;
        }
      }
    }
  }
  if (!Out) {
    auto Plain = runDeviceCompile(Req);
    if (!Plain)
      return Plain.takeError();
    Out = std::move(*Plain);
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
    else if (Error E = Cache->store(Key, Out->Deps, R.Ptx))
      R.Notes.push_back("not cached: " + toString(std::move(E)));
  }
  return R;
}

} // namespace astra
