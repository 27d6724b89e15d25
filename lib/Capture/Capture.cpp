//===- Capture.cpp - Reading a capture folder -----------------------------===//
#include "astra/Capture/Capture.h"
#include "astra/Capture/CaptureFormat.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Json.h"
#include "astra/Support/JsonMap.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstring>
#include <map>

using namespace llvm;

namespace astra {

std::optional<int64_t> CapturedArg::asInt(bool Signed) const {
  size_t N = Bytes.size();
  if (N != 1 && N != 2 && N != 4 && N != 8)
    return std::nullopt;
  uint64_t U = 0;
  for (size_t I = 0; I < N; ++I)
    U |= uint64_t(Bytes[I]) << (8 * I);
  if (Signed && N < 8 && (U >> (8 * N - 1)) & 1)
    U |= ~uint64_t(0) << (8 * N);
  return int64_t(U);
}

std::optional<double> CapturedArg::asReal() const {
  if (Bytes.size() == 4) {
    float F;
    std::memcpy(&F, Bytes.data(), 4);
    return double(F);
  }
  if (Bytes.size() == 8) {
    double D;
    std::memcpy(&D, Bytes.data(), 8);
    return D;
  }
  return std::nullopt;
}

const CapturedKernel *Capture::find(StringRef Symbol) const {
  for (const CapturedKernel &K : Kernels)
    if (K.Symbol == Symbol)
      return &K;
  return nullptr;
}

std::string Capture::blobPath(const CapturedArg &A) const {
  SmallString<256> P(Dir);
  sys::path::append(P, A.Blob);
  return std::string(P);
}

// The manifests and capture.json are written by the injection library and
// by `capture` (no LLVM there); these mappings only read them.

namespace {

/// A grid, block or cluster: three non-negative integers.
void readDims(JsonIO &IO, StringRef Key, int64_t (&Out)[3], bool Required) {
  IO.member(Key, Required, [&] {
    const rapidjson::Value &A = IO.value();
    if (!A.IsArray() || A.Size() != 3 ||
        !all_of(A.GetArray(),
                [](const rapidjson::Value &X) { return X.IsUint64(); }))
      return IO.fail("expected three non-negative integers");
    for (unsigned I = 0; I < 3; ++I)
      Out[I] = int64_t(A[I].GetUint64());
  });
}

/// One parameter's (offset, size).
struct ParamLayout {
  uint64_t Offset = 0, Size = 0;
};

/// Reads one manifest into kernels keyed by symbol, merging configurations
/// with those already read (another process of the same program).
class ManifestReader {
public:
  ManifestReader(Capture &C, std::string Path) : C(C), Path(std::move(Path)) {}

  Error read(StringRef Text);

  /// Configuration keys per kernel, for merging processes.
  std::map<std::string, std::map<std::string, size_t>> *Keys = nullptr;

private:
  /// Adds \p K (the manifest's kernels[At]) to the capture: a kernel
  /// another process launched too gets its counts and configurations.
  Error merge(CapturedKernel &K, size_t At);

  Capture &C;
  std::string Path;
};

} // namespace

static void mapJson(JsonIO &IO, CapturedAllocation &A) {
  IO.object([&] {
    std::string Base;
    IO.required("base", Base);
    StringRef B(Base);
    if (IO.ok() && (!B.consume_front("0x") || B.getAsInteger(16, A.Base)))
      return IO.fail("base", "expected a hexadecimal address (0x...)");
    IO.required("size", A.Size);
    IO.required("offset", A.Offset);
    if (IO.ok() && A.Offset >= A.Size && A.Size)
      return IO.fail("offset", "lies past the allocation's end");
    IO.optional("memory", A.Memory);
  });
}

static void mapJson(JsonIO &IO, CapturedArg &Out) {
  IO.object([&] {
    std::string Hex;
    IO.required("bytes", Hex);
    if (!IO.ok())
      return;
    if (Hex.size() % 2 || !all_of(Hex, isHexDigit))
      return IO.fail("bytes", "expected hexadecimal bytes");
    for (size_t I = 0; I < Hex.size(); I += 2)
      Out.Bytes.push_back(uint8_t(hexFromNibbles(Hex[I], Hex[I + 1])));
    IO.optional("pointer", Out.Pointer);
    if (!IO.ok() || !Out.Pointer)
      return;
    bool HasContents = false;
    IO.member("contents", /*Required=*/false, [&] {
      HasContents = true;
      IO.object([&] {
        IO.required("blob", Out.Blob);
        // A blob lives in the capture's blob folder; never anywhere else.
        StringRef Blob = Out.Blob;
        if (IO.ok() &&
            (!Blob.starts_with(std::string(capture::BlobDir) + "/") ||
             Blob.contains("..") || Blob.contains('\\')))
          return IO.fail("blob", "'" + Out.Blob +
                                     "' is not a blob of the capture "
                                     "(blobs/<hash>.bin)");
        IO.required("size", Out.BlobSize);
        if (IO.ok() && Out.BlobSize != Out.Pointer->extent())
          return IO.fail("size", Twine(Out.BlobSize) +
                                     " bytes, but the buffer extends " +
                                     Twine(Out.Pointer->extent()) +
                                     " bytes past the pointer");
        IO.required("hash", Out.BlobHash);
      });
    });
    if (!HasContents)
      IO.optional("contents_missing", Out.ContentsMissing);
  });
}

static void mapJson(JsonIO &IO, CapturedConfig &Out) {
  IO.object([&] {
    IO.required("launches", Out.Launches);
    IO.optional("failed_launches", Out.FailedLaunches);
    IO.optional("first_launch", Out.FirstLaunch);
    IO.optional("api", Out.Api);
    readDims(IO, "grid", Out.Grid, /*Required=*/true);
    readDims(IO, "block", Out.Block, /*Required=*/true);
    IO.required("shmem", Out.Shmem, atLeast(0));
    readDims(IO, "cluster", Out.Cluster, /*Required=*/false);
    IO.optional("cooperative", Out.Cooperative);
    IO.optional("graph_capture", Out.GraphCapture);
    IO.optional("streams", Out.Streams);
    IO.required("args", Out.Args);
  });
}

static void mapJson(JsonIO &IO, ParamLayout &P) {
  IO.object([&] {
    IO.required("offset", P.Offset);
    IO.required("size", P.Size, atLeast(1));
  });
}

static void mapJson(JsonIO &IO, CapturedKernel &K) {
  IO.object([&] {
    IO.required("name", K.Symbol);
    IO.optional("demangled", K.Demangled);
    if (K.Demangled.empty())
      K.Demangled = K.Symbol;
    K.Name = capture::kernelNameOf(K.Demangled);
    IO.required("launches", K.Launches);
    IO.optional("launches_not_recorded", K.NotRecorded);
    IO.optional("runtime_launches", K.RuntimeLaunches);
    IO.optional("error", K.Error);
    std::vector<ParamLayout> Params;
    IO.required("params", Params);
    for (const ParamLayout &P : Params)
      K.Params.push_back({P.Offset, P.Size});
    IO.required("configs", K.Configs);
    for (size_t I = 0; I < K.Configs.size() && IO.ok(); ++I) {
      const std::vector<CapturedArg> &Args = K.Configs[I].Args;
      std::string CF = "configs[" + std::to_string(I) + "]";
      if (Args.size() != K.Params.size())
        return IO.fail(CF + ".args", Twine(Args.size()) +
                                         " arguments, but the kernel has " +
                                         Twine(K.Params.size()) +
                                         " parameters");
      for (size_t A = 0; A < Args.size(); ++A)
        if (!Args[A].Bytes.empty() &&
            Args[A].Bytes.size() != K.Params[A].second)
          return IO.fail(CF + ".args[" + std::to_string(A) + "].bytes",
                         Twine(Args[A].Bytes.size()) +
                             " bytes, but the parameter has " +
                             Twine(K.Params[A].second));
    }
  });
}

namespace {

/// A manifest's own fields; its kernels are merged into the capture.
struct Manifest {
  std::string Format, State, Error;
  int64_t Version = 0;
  std::vector<std::string> Program, Devices;
  uint64_t MaxBytes = 0, Bytes = 0, Skipped = 0;
  std::vector<CapturedKernel> Kernels;
};

/// What makes two launches one configuration: as the library keys them.
std::string configKey(const CapturedConfig &C) {
  std::string K;
  raw_string_ostream OS(K);
  for (int64_t X : C.Grid)
    OS << X << ",";
  for (int64_t X : C.Block)
    OS << X << ",";
  OS << C.Shmem << ",";
  for (int64_t X : C.Cluster)
    OS << X << ",";
  OS << C.Cooperative << ";";
  for (const CapturedArg &A : C.Args) {
    if (A.Pointer)
      OS << "P" << A.Pointer->extent() << ";";
    else
      OS << "S" << toHex(ArrayRef<uint8_t>(A.Bytes)) << ";";
  }
  return K;
}

} // namespace

static void mapJson(JsonIO &IO, Manifest &M) {
  IO.object([&] {
    IO.required("format", M.Format);
    if (IO.ok() && M.Format != capture::FormatName)
      return IO.fail("format", "'" + M.Format +
                                   "' is not a capture of clang-astra "
                                   "(expected '" +
                                   capture::FormatName + "')");
    IO.required("version", M.Version, atLeast(0));
    if (IO.ok() && M.Version != capture::FormatVersion)
      return IO.fail("version", "capture format version " + Twine(M.Version) +
                                    "; this clang-astra reads version " +
                                    Twine(capture::FormatVersion) +
                                    " (capture the program again with this "
                                    "clang-astra)");
    IO.required("state", M.State);
    if (IO.ok() && M.State != "running" && M.State != "exited")
      return IO.fail("state", "expected \"running\" or \"exited\"");
    IO.optional("error", M.Error);
    IO.optional("program", M.Program);
    IO.optional("devices", M.Devices);
    IO.optional("max_bytes", M.MaxBytes);
    IO.optional("contents_bytes", M.Bytes);
    IO.optional("contents_skipped", M.Skipped);
    IO.required("kernels", M.Kernels);
  });
}

Error ManifestReader::merge(CapturedKernel &K, size_t At) {
  CapturedKernel *Into = nullptr;
  for (CapturedKernel &X : C.Kernels)
    if (X.Symbol == K.Symbol)
      Into = &X;
  if (!Into) {
    C.Kernels.push_back(CapturedKernel());
    Into = &C.Kernels.back();
    Into->Symbol = K.Symbol;
    Into->Demangled = K.Demangled;
    Into->Name = K.Name;
    Into->Params = K.Params;
  } else if (Into->Params != K.Params) {
    return createStringError(inconvertibleErrorCode(),
                             Path + ": kernels[" + Twine(At) +
                                 "].params: the kernel '" + K.Symbol +
                                 "' has another parameter layout in another "
                                 "process");
  }
  Into->Launches += K.Launches;
  Into->NotRecorded += K.NotRecorded;
  Into->RuntimeLaunches += K.RuntimeLaunches;
  if (Into->Error.empty())
    Into->Error = K.Error;
  std::map<std::string, size_t> &Index = (*Keys)[K.Symbol];
  for (CapturedConfig &Cfg : K.Configs) {
    std::string Key = configKey(Cfg);
    auto It = Index.find(Key);
    if (It == Index.end()) {
      Index[Key] = Into->Configs.size();
      Into->Configs.push_back(std::move(Cfg));
      continue;
    }
    CapturedConfig &Old = Into->Configs[It->second];
    Old.Launches += Cfg.Launches;
    Old.FailedLaunches += Cfg.FailedLaunches;
    for (uint64_t S : Cfg.Streams)
      if (!is_contained(Old.Streams, S))
        Old.Streams.push_back(S);
    // Contents from whichever process recorded them.
    for (size_t A = 0; A < Old.Args.size(); ++A)
      if (Old.Args[A].Blob.empty() && !Cfg.Args[A].Blob.empty())
        Old.Args[A] = Cfg.Args[A];
  }
  return Error::success();
}

Error ManifestReader::read(StringRef Text) {
  rapidjson::Document Doc;
  if (Error E = parseJsonWithComments(Text, Path, Doc))
    return createStringError(inconvertibleErrorCode(),
                             toString(std::move(E)) +
                                 " (a truncated or damaged manifest)");
  Manifest M;
  if (Error E = readJson(Doc, Path, M))
    return E;
  ++C.Processes;
  if (M.State == "running")
    ++C.Unfinished;
  if (!M.Error.empty()) {
    C.Notes.push_back(Path + ": the capture library could not record: " +
                      M.Error);
    C.InjectionErrors.push_back(C.Notes.back());
  }
  if (C.Program.empty())
    C.Program = M.Program;
  for (const std::string &D : M.Devices)
    if (!is_contained(C.Devices, D))
      C.Devices.push_back(D);
  C.MaxBytes = std::max(C.MaxBytes, M.MaxBytes);
  C.ContentsBytes += M.Bytes;
  C.ContentsSkipped += M.Skipped;
  for (size_t I = 0; I < M.Kernels.size(); ++I)
    if (Error E = merge(M.Kernels[I], I))
      return E;
  return Error::success();
}

namespace {

/// capture.json.
struct Summary {
  std::string Format;
  int64_t Version = 0;
  CaptureRun Run;
};

} // namespace

static void mapJson(JsonIO &IO, Summary &S) {
  IO.object([&] {
    IO.required("format", S.Format);
    IO.required("version", S.Version, atLeast(0));
    if (IO.ok() && (S.Format != capture::FormatName ||
                    S.Version != capture::FormatVersion))
      return IO.fail("version", "not a capture summary of version " +
                                    Twine(capture::FormatVersion));
    IO.optional("command", S.Run.Command);
    IO.member("exit", /*Required=*/true, [&] {
      IO.object([&] {
        int64_t Code = -1, Sig = -1;
        IO.optional("code", Code, atLeast(0));
        IO.optional("signal", Sig, atLeast(0));
        if (Code >= 0)
          S.Run.ExitCode = int(Code);
        if (Sig >= 0)
          S.Run.Signal = int(Sig);
      });
    });
    IO.optional("seconds", S.Run.Seconds);
  });
}

static Error readSummary(Capture &C, StringRef Path) {
  auto Text = readFile(Path);
  if (!Text)
    return Text.takeError();
  rapidjson::Document Doc;
  if (Error E = parseJsonWithComments(*Text, Path, Doc))
    return E;
  Summary S;
  if (Error E = readJson(Doc, Path, S))
    return E;
  C.Run = S.Run;
  return Error::success();
}

Expected<Capture> readCapture(StringRef Dir) {
  if (!sys::fs::is_directory(Dir))
    return createStringError(inconvertibleErrorCode(),
                             "%s: no such capture folder (make one with "
                             "`clang-astra capture -o %s -- <program>`)",
                             Dir.str().c_str(), Dir.str().c_str());
  Capture C;
  C.Dir = Dir.str();
  std::vector<std::string> Manifests;
  std::error_code EC;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    StringRef Name = sys::path::filename(It->path());
    if (Name.starts_with(capture::ManifestPrefix) && Name.ends_with(".json"))
      Manifests.push_back(It->path());
  }
  if (EC)
    return createStringError(EC, "%s: %s", Dir.str().c_str(),
                             EC.message().c_str());
  if (Manifests.empty())
    return createStringError(
        inconvertibleErrorCode(),
        "%s: not a capture: no %s<pid>.json (no process of the program "
        "initialized CUDA under `clang-astra capture`)",
        Dir.str().c_str(), capture::ManifestPrefix);
  llvm::sort(Manifests);
  std::map<std::string, std::map<std::string, size_t>> Keys;
  for (const std::string &M : Manifests) {
    auto Text = readFile(M);
    if (!Text)
      return Text.takeError();
    ManifestReader MR(C, M);
    MR.Keys = &Keys;
    if (Error E = MR.read(*Text))
      return E;
  }
  SmallString<256> Summary(Dir);
  sys::path::append(Summary, capture::SummaryFile);
  if (sys::fs::exists(Summary))
    if (Error E = readSummary(C, Summary))
      return E;
  for (CapturedKernel &K : C.Kernels) {
    llvm::stable_sort(K.Configs, [](const CapturedConfig &A,
                                    const CapturedConfig &B) {
      if (A.Launches != B.Launches)
        return A.Launches > B.Launches;
      return A.FirstLaunch < B.FirstLaunch;
    });
    if (!K.Error.empty())
      C.Notes.push_back("kernel '" + K.Name + "': " + K.Error);
    if (K.RuntimeLaunches > K.Launches)
      C.Notes.push_back(
          "kernel '" + K.Name + "': the CUDA runtime launched it " +
          std::to_string(K.RuntimeLaunches) +
          " times but the driver's callbacks saw " +
          std::to_string(K.Launches) +
          " launches; configurations may be missing from the capture");
  }
  return C;
}

Error checkBlob(const Capture &C, const CapturedArg &A) {
  std::string Path = C.blobPath(A);
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return createStringError(Buf.getError(), "%s: %s (the capture is "
                                             "incomplete)",
                             Path.c_str(), Buf.getError().message().c_str());
  StringRef Data = (*Buf)->getBuffer();
  if (Data.size() != A.BlobSize)
    return createStringError(inconvertibleErrorCode(),
                             "%s: %zu bytes, the manifest says %llu (a "
                             "truncated blob)",
                             Path.c_str(), Data.size(),
                             (unsigned long long)A.BlobSize);
  std::string Hash =
      capture::hashHex(capture::contentHash(Data.data(), Data.size()));
  if (Hash != A.BlobHash)
    return createStringError(inconvertibleErrorCode(),
                             "%s: its contents hash to %s, the manifest says "
                             "%s (the blob was changed)",
                             Path.c_str(), Hash.c_str(), A.BlobHash.c_str());
  return Error::success();
}

} // namespace astra
