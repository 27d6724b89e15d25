//===- CaptureCommand.cpp - clang-astra capture ---------------------------===//
//
// Runs a user's program with the capture library (libastra-capture.so,
// lib/CaptureInject) injected through CUDA_INJECTION64_PATH, then writes
// the run's summary (capture.json) and checks that what the library wrote
// reads back. The capture folder's format: docs/capture.md.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Capture/Capture.h"
#include "astra/Capture/CaptureFormat.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand CaptureCmd(
    "capture", "Run a CUDA program and record its kernels' launches "
               "(clang-astra capture -o DIR -- <program> [args])");
static cl::list<std::string> KernelNames(
    "kernel",
    cl::desc("Record this kernel only (the name as `list` prints it, with or "
             "without template arguments, or the mangled symbol); "
             "repeatable; default: every kernel"),
    cl::value_desc("name"), cl::sub(CaptureCmd), cl::cat(AstraCategory));
static cl::opt<std::string> OutDir("o", cl::desc("The capture folder to write "
                                                 "(must not exist, or be "
                                                 "empty)"),
                                   cl::value_desc("dir"), cl::Required,
                                   cl::sub(CaptureCmd), cl::cat(AstraCategory));
static cl::opt<std::string> MaxBytes(
    "max-bytes",
    cl::desc("Bytes of buffer contents the capture may write (K, M, G "
             "suffixes; 0: shapes only; default 1G). Past it, launches are "
             "recorded without contents, and the capture says so"),
    cl::value_desc("bytes"), cl::init("1G"), cl::sub(CaptureCmd),
    cl::cat(AstraCategory));
static cl::opt<unsigned long long> MaxLaunches(
    "max-launches",
    cl::desc("Launches recorded per kernel (0: all); later ones are only "
             "counted"),
    cl::value_desc("n"), cl::init(0), cl::sub(CaptureCmd),
    cl::cat(AstraCategory));
static cl::opt<std::string> CuptiPath(
    "cupti",
    cl::desc("The libcupti to load (default: the CUDA toolkit's, found from "
             "CUDA_PATH, CUDA_HOME or /usr/local/cuda, else the loader's "
             "search)"),
    cl::value_desc("path"), cl::sub(CaptureCmd), cl::cat(AstraCategory));

/// "1G" -> 2^30. Errors say what is wrong with the option.
static Expected<uint64_t> parseByteSize(StringRef S) {
  StringRef T = S.trim();
  uint64_t Mult = 1;
  if (!T.empty()) {
    char C = toLower(T.back());
    if (C == 'k' || C == 'm' || C == 'g' || C == 't') {
      Mult = C == 'k' ? 1ULL << 10
             : C == 'm' ? 1ULL << 20
             : C == 'g' ? 1ULL << 30
                        : 1ULL << 40;
      T = T.drop_back();
    }
  }
  uint64_t N = 0;
  if (T.empty() || T.getAsInteger(10, N) || (N && Mult > UINT64_MAX / N))
    return createStringError(inconvertibleErrorCode(),
                             "capture: --max-bytes '%s' is not a byte count "
                             "(e.g. 0, 500M, 2G)",
                             S.str().c_str());
  return N * Mult;
}

/// The capture library: beside clang-astra (../lib), as the build and the
/// portable tarball lay it out; ASTRA_CAPTURE_LIBRARY overrides it.
static Expected<std::string> findLibrary(const Session &S) {
  if (const char *E = getenv("ASTRA_CAPTURE_LIBRARY")) {
    if (!sys::fs::exists(E))
      return createStringError(inconvertibleErrorCode(),
                               "capture: ASTRA_CAPTURE_LIBRARY names %s, "
                               "which does not exist",
                               E);
    return std::string(E);
  }
  std::string Exe =
      sys::fs::getMainExecutable(S.Argv0, (void *)&findLibrary);
  SmallString<256> P(sys::path::parent_path(sys::path::parent_path(Exe)));
  sys::path::append(P, "lib", capture::LibraryName);
  if (!sys::fs::exists(P))
    return createStringError(
        inconvertibleErrorCode(),
        "capture: no capture library at %s (this clang-astra was built "
        "without the CUDA toolkit's cupti.h; rebuild with CUDA_PATH set)",
        P.c_str());
  return std::string(P);
}

/// The toolkit's libcupti, or empty (the library then asks the loader).
static std::string findCupti() {
  if (!CuptiPath.empty())
    return CuptiPath;
  std::vector<std::string> Roots;
  for (const char *V : {"CUDA_PATH", "CUDA_HOME"})
    if (const char *E = getenv(V))
      Roots.push_back(E);
  Roots.push_back("/usr/local/cuda");
  for (const std::string &R : Roots)
    for (const char *Sub : {"extras/CUPTI/lib64", "lib64",
                            "targets/x86_64-linux/lib"}) {
      SmallString<256> P(R);
      sys::path::append(P, Sub, "libcupti.so");
      if (sys::fs::exists(P))
        return std::string(P);
    }
  return "";
}

/// Whether \p Dir holds anything.
static bool hasEntries(StringRef Dir) {
  std::error_code EC;
  sys::fs::directory_iterator It(Dir, EC);
  return !EC && It != sys::fs::directory_iterator();
}

static int runCapture(const Session &S) {
  if (!S.HasDashDash || S.ExtraFlags.empty())
    return reportError("capture: name the program after `--`: clang-astra "
                       "capture -o DIR -- ./app [args]");
  auto Budget = parseByteSize(MaxBytes);
  if (!Budget)
    return reportError(Budget.takeError());
  if (getenv("CUDA_INJECTION64_PATH"))
    return reportError("capture: CUDA_INJECTION64_PATH is already set (another "
                       "CUDA tool is injected); unset it to capture");
  auto Lib = findLibrary(S);
  if (!Lib)
    return reportError(Lib.takeError());

  // A folder of its own: a capture never mixes with other files.
  SmallString<256> Dir(OutDir.getValue());
  sys::fs::make_absolute(Dir);
  sys::path::remove_dots(Dir, true);
  if (sys::fs::exists(Dir)) {
    if (!sys::fs::is_directory(Dir))
      return reportError("capture: " + OutDir + " exists and is not a folder");
    if (hasEntries(Dir))
      return reportError("capture: " + OutDir +
                         " is not empty; name a new folder (a capture never "
                         "adds to another)");
  }
  if (std::error_code EC = sys::fs::create_directories(Dir, true,
                                                       sys::fs::owner_all))
    return reportError("capture: cannot create " + OutDir + ": " +
                       EC.message());
  // Captures are the user's data: only the user reads them.
  sys::fs::setPermissions(Dir, sys::fs::owner_all);

  std::string Kernels = join(KernelNames, "\n");
  std::string Cupti = findCupti();
  std::vector<std::string> Env;
  for (char **E = environ; *E; ++E) {
    StringRef V(*E);
    if (V.starts_with("ASTRA_CAPTURE_"))
      continue; // Ours to set.
    Env.push_back(V.str());
  }
  Env.push_back("CUDA_INJECTION64_PATH=" + *Lib);
  Env.push_back(std::string(capture::EnvDir) + "=" + std::string(Dir));
  Env.push_back(std::string(capture::EnvKernels) + "=" + Kernels);
  Env.push_back(std::string(capture::EnvMaxBytes) + "=" +
                std::to_string(*Budget));
  Env.push_back(std::string(capture::EnvMaxLaunches) + "=" +
                std::to_string(MaxLaunches));
  if (!Cupti.empty())
    Env.push_back(std::string(capture::EnvCupti) + "=" + Cupti);
  std::vector<char *> EnvP, ArgP;
  for (std::string &E : Env)
    EnvP.push_back(E.data());
  EnvP.push_back(nullptr);
  std::vector<std::string> Args = S.ExtraFlags;
  for (std::string &A : Args)
    ArgP.push_back(A.data());
  ArgP.push_back(nullptr);

  // The program shares the terminal: ^C reaches it, and we wait for it to
  // end so that the summary is written either way.
  struct sigaction Ignore = {}, OldInt, OldTerm;
  Ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &Ignore, &OldInt);
  sigaction(SIGTERM, &Ignore, &OldTerm);
  posix_spawnattr_t Attr;
  posix_spawnattr_init(&Attr);
  sigset_t Default;
  sigemptyset(&Default);
  sigaddset(&Default, SIGINT);
  sigaddset(&Default, SIGTERM);
  posix_spawnattr_setsigdefault(&Attr, &Default);
  posix_spawnattr_setflags(&Attr, POSIX_SPAWN_SETSIGDEF);
  auto T0 = std::chrono::steady_clock::now();
  pid_t Pid = 0;
  int SpawnErr =
      posix_spawnp(&Pid, ArgP[0], nullptr, &Attr, ArgP.data(), EnvP.data());
  posix_spawnattr_destroy(&Attr);
  int Status = 0;
  if (SpawnErr == 0)
    while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
    }
  sigaction(SIGINT, &OldInt, nullptr);
  sigaction(SIGTERM, &OldTerm, nullptr);
  double Seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - T0)
                       .count();
  if (SpawnErr != 0) {
    sys::fs::remove(Dir); // Empty: the program never started.
    return reportError("capture: cannot run '" + Args[0] +
                       "': " + std::strerror(SpawnErr));
  }
  std::optional<int> Code, Signal;
  if (WIFEXITED(Status))
    Code = WEXITSTATUS(Status);
  else if (WIFSIGNALED(Status))
    Signal = WTERMSIG(Status);

  JsonWriter W;
  W.objectBegin();
  W.field("format", capture::FormatName);
  W.field("version", capture::FormatVersion);
  W.key("command");
  W.arrayBegin();
  for (const std::string &A : Args)
    W.value(A);
  W.arrayEnd();
  W.key("exit");
  W.objectBegin();
  if (Code)
    W.field("code", *Code);
  if (Signal)
    W.field("signal", *Signal);
  W.objectEnd();
  W.field("seconds", Seconds);
  W.field("max_bytes", (unsigned long long)*Budget);
  W.field("max_launches", (unsigned long long)MaxLaunches);
  W.key("kernels");
  W.arrayBegin();
  for (const std::string &K : KernelNames)
    W.value(K);
  W.arrayEnd();
  W.objectEnd();
  SmallString<256> Summary(Dir);
  sys::path::append(Summary, capture::SummaryFile);
  if (Error E = writeFileAtomically(Summary, W.str()))
    return reportError(std::move(E));
  // writeFileAtomically leaves a new file as the umask says.
  sys::fs::setPermissions(Summary, sys::fs::owner_read | sys::fs::owner_write);
  SmallString<256> BudgetFile(Dir);
  sys::path::append(BudgetFile, capture::BudgetFile);
  sys::fs::remove(BudgetFile);

  std::string How = Code ? "exited with status " + std::to_string(*Code)
                         : "was killed by signal " + std::to_string(*Signal) +
                               " (" + strsignal(*Signal) + ")";
  auto C = readCapture(Dir);
  if (!C) {
    std::string Msg = toString(C.takeError());
    if (StringRef(Msg).contains("no " + std::string(capture::ManifestPrefix)))
      return reportError(
          "capture: the program " + How +
          " and never initialized the CUDA driver with the capture library "
          "loaded: it has no GPU or no CUDA driver, or makes no CUDA call; " +
          OutDir + " holds only capture.json");
    return reportError("capture: the program " + How +
                       ", and its capture does not read back: " + Msg);
  }
  for (const std::string &N : C->Notes)
    warning(N);

  uint64_t Launches = 0, Configs = 0;
  for (const CapturedKernel &K : C->Kernels) {
    Launches += K.Launches;
    Configs += K.Configs.size();
    outs() << "  " << K.Name << ": " << K.Launches << " launch"
           << (K.Launches == 1 ? "" : "es") << ", " << K.Configs.size()
           << " configuration" << (K.Configs.size() == 1 ? "" : "s");
    if (K.NotRecorded)
      outs() << " (" << K.NotRecorded
             << " past --max-launches counted, not recorded)";
    outs() << "\n";
  }
  outs() << "capture: " << OutDir << ": " << C->Kernels.size() << " kernel"
         << (C->Kernels.size() == 1 ? "" : "s") << ", " << Launches
         << " launches, " << Configs << " configurations, "
         << C->ContentsBytes << " bytes of buffer contents, from "
         << C->Processes << " process" << (C->Processes == 1 ? "" : "es")
         << "\n";
  if (C->ContentsSkipped)
    warning("capture: " + Twine(C->ContentsSkipped) +
            " buffers were over the --max-bytes budget of " +
            Twine(*Budget) +
            " bytes: their launches are recorded without contents (shapes "
            "only); raise --max-bytes to replay them");
  bool Failed = !Code || *Code != 0;
  if (Failed)
    return reportError("capture: the program " + How + "; the " +
                       Twine(Launches) +
                       " launches it made before are kept in " + OutDir);
  if (C->Kernels.empty() && !C->InjectionErrors.empty())
    return reportError("capture: nothing was recorded: " +
                       C->InjectionErrors.front());
  if (C->Kernels.empty()) {
    std::string What =
        KernelNames.empty()
            ? std::string("no kernel")
            : "none of the selected kernels (" + join(KernelNames, ", ") + ")";
    return reportError("capture: the program launched " + What + "; " +
                       OutDir + " records no launch");
  }
  return 0;
}

static SubcommandRegistration Reg(CaptureCmd, runCapture);

} // namespace tool
} // namespace astra
