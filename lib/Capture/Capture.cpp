//===- Capture.cpp - Reading a capture folder -----------------------------===//
#include "astra/Capture/Capture.h"
#include "astra/Capture/CaptureFormat.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Json.h"

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

namespace {

using JValue = rapidjson::Value;

/// Reads one manifest into kernels keyed by symbol, merging configurations
/// with those already read (another process of the same program).
class ManifestReader {
public:
  ManifestReader(Capture &C, std::string Path) : C(C), R(Path) {}

  Error read(StringRef Text);

  /// Configuration keys per kernel, for merging processes.
  std::map<std::string, std::map<std::string, size_t>> *Keys = nullptr;

private:
  Error readKernel(const JValue &V, const std::string &Field);
  Error readConfig(const JValue &V, const std::string &Field,
                   CapturedConfig &Out);
  Error readArg(const JValue &V, const std::string &Field, CapturedArg &Out);
  Error dims(const JValue &O, StringRef Field, StringRef Key, int64_t (&Out)[3],
             bool Required);

  Capture &C;
  JsonFieldReader R;
};

Error ManifestReader::dims(const JValue &O, StringRef Field, StringRef Key,
                           int64_t (&Out)[3], bool Required) {
  auto V = R.get(O, Field, Key, Required);
  if (!V)
    return V.takeError();
  if (!*V)
    return Error::success();
  const JValue &A = **V;
  if (!A.IsArray() || A.Size() != 3 ||
      !all_of(A.GetArray(), [](const JValue &X) { return X.IsUint64(); }))
    return R.fail(JsonFieldReader::join(Field, Key),
                  "expected three non-negative integers");
  for (unsigned I = 0; I < 3; ++I)
    Out[I] = int64_t(A[I].GetUint64());
  return Error::success();
}

Error ManifestReader::readArg(const JValue &V, const std::string &Field,
                              CapturedArg &Out) {
  std::string Hex;
  if (Error E = R.str(V, Field, "bytes", Hex))
    return E;
  if (Hex.size() % 2 || !all_of(Hex, isHexDigit))
    return R.fail(Field + ".bytes", "expected hexadecimal bytes");
  for (size_t I = 0; I < Hex.size(); I += 2)
    Out.Bytes.push_back(uint8_t(hexFromNibbles(Hex[I], Hex[I + 1])));
  auto P = R.get(V, Field, "pointer", false);
  if (!P)
    return P.takeError();
  if (!*P)
    return Error::success();
  std::string PF = Field + ".pointer";
  CapturedAllocation A;
  std::string Base;
  if (Error E = R.str(**P, PF, "base", Base))
    return E;
  StringRef B(Base);
  if (!B.consume_front("0x") || B.getAsInteger(16, A.Base))
    return R.fail(PF + ".base", "expected a hexadecimal address (0x...)");
  if (Error E = R.integer(**P, PF, "size", A.Size, 0, true))
    return E;
  if (Error E = R.integer(**P, PF, "offset", A.Offset, 0, true))
    return E;
  if (A.Offset >= A.Size && A.Size)
    return R.fail(PF + ".offset", "lies past the allocation's end");
  if (Error E = R.str(**P, PF, "memory", A.Memory, false))
    return E;
  Out.Pointer = A;
  auto Contents = R.get(V, Field, "contents", false);
  if (!Contents)
    return Contents.takeError();
  if (*Contents) {
    std::string CF = Field + ".contents";
    if (Error E = R.str(**Contents, CF, "blob", Out.Blob))
      return E;
    // A blob lives in the capture's blob folder; never anywhere else.
    if (!StringRef(Out.Blob).starts_with(std::string(capture::BlobDir) + "/") ||
        StringRef(Out.Blob).contains("..") || StringRef(Out.Blob).contains('\\'))
      return R.fail(CF + ".blob", "'" + Out.Blob + "' is not a blob of the "
                                                   "capture (blobs/<hash>.bin)");
    if (Error E = R.integer(**Contents, CF, "size", Out.BlobSize, 0, true))
      return E;
    if (Out.BlobSize != A.extent())
      return R.fail(CF + ".size",
                    Twine(Out.BlobSize) + " bytes, but the buffer extends " +
                        Twine(A.extent()) + " bytes past the pointer");
    if (Error E = R.str(**Contents, CF, "hash", Out.BlobHash))
      return E;
  } else if (Error E = R.str(V, Field, "contents_missing", Out.ContentsMissing,
                             false)) {
    return E;
  }
  return Error::success();
}

Error ManifestReader::readConfig(const JValue &V, const std::string &Field,
                                 CapturedConfig &Out) {
  if (Error E = R.integer(V, Field, "launches", Out.Launches, 0, true))
    return E;
  if (Error E = R.integer(V, Field, "failed_launches", Out.FailedLaunches, 0))
    return E;
  if (Error E = R.integer(V, Field, "first_launch", Out.FirstLaunch, 0))
    return E;
  if (Error E = R.str(V, Field, "api", Out.Api, false))
    return E;
  if (Error E = dims(V, Field, "grid", Out.Grid, true))
    return E;
  if (Error E = dims(V, Field, "block", Out.Block, true))
    return E;
  if (Error E = R.integer(V, Field, "shmem", Out.Shmem, 0, true))
    return E;
  if (Error E = dims(V, Field, "cluster", Out.Cluster, false))
    return E;
  if (Error E = R.boolean(V, Field, "cooperative", Out.Cooperative))
    return E;
  if (Error E = R.boolean(V, Field, "graph_capture", Out.GraphCapture))
    return E;
  auto Streams = R.get(V, Field, "streams", false);
  if (!Streams)
    return Streams.takeError();
  if (*Streams) {
    if (!(*Streams)->IsArray())
      return R.fail(Field + ".streams", "expected an array of stream ids");
    for (const JValue &S : (*Streams)->GetArray()) {
      if (!S.IsUint64())
        return R.fail(Field + ".streams", "expected an array of stream ids");
      Out.Streams.push_back(S.GetUint64());
    }
  }
  auto Args = R.get(V, Field, "args", true);
  if (!Args)
    return Args.takeError();
  if (!(*Args)->IsArray())
    return R.fail(Field + ".args", "expected an array");
  unsigned I = 0;
  for (const JValue &A : (*Args)->GetArray()) {
    CapturedArg Arg;
    if (Error E = readArg(A, Field + ".args[" + std::to_string(I++) + "]", Arg))
      return E;
    Out.Args.push_back(std::move(Arg));
  }
  return Error::success();
}

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

Error ManifestReader::readKernel(const JValue &V, const std::string &Field) {
  CapturedKernel K;
  if (Error E = R.str(V, Field, "name", K.Symbol))
    return E;
  if (Error E = R.str(V, Field, "demangled", K.Demangled, false))
    return E;
  if (K.Demangled.empty())
    K.Demangled = K.Symbol;
  K.Name = capture::kernelNameOf(K.Demangled);
  if (Error E = R.integer(V, Field, "launches", K.Launches, 0, true))
    return E;
  if (Error E =
          R.integer(V, Field, "launches_not_recorded", K.NotRecorded, 0))
    return E;
  if (Error E = R.integer(V, Field, "runtime_launches", K.RuntimeLaunches, 0))
    return E;
  if (Error E = R.str(V, Field, "error", K.Error, false))
    return E;
  auto Params = R.get(V, Field, "params", true);
  if (!Params)
    return Params.takeError();
  if (!(*Params)->IsArray())
    return R.fail(Field + ".params", "expected an array");
  unsigned I = 0;
  for (const JValue &P : (*Params)->GetArray()) {
    std::string PF = Field + ".params[" + std::to_string(I++) + "]";
    uint64_t Off = 0, Size = 0;
    if (Error E = R.integer(P, PF, "offset", Off, 0, true))
      return E;
    if (Error E = R.integer(P, PF, "size", Size, 1, true))
      return E;
    K.Params.push_back({Off, Size});
  }
  auto Configs = R.get(V, Field, "configs", true);
  if (!Configs)
    return Configs.takeError();
  if (!(*Configs)->IsArray())
    return R.fail(Field + ".configs", "expected an array");
  I = 0;
  for (const JValue &CV : (*Configs)->GetArray()) {
    std::string CF = Field + ".configs[" + std::to_string(I++) + "]";
    CapturedConfig Cfg;
    if (Error E = readConfig(CV, CF, Cfg))
      return E;
    if (Cfg.Args.size() != K.Params.size())
      return R.fail(CF + ".args", Twine(Cfg.Args.size()) +
                                      " arguments, but the kernel has " +
                                      Twine(K.Params.size()) + " parameters");
    for (size_t A = 0; A < Cfg.Args.size(); ++A)
      if (!Cfg.Args[A].Bytes.empty() &&
          Cfg.Args[A].Bytes.size() != K.Params[A].second)
        return R.fail(CF + ".args[" + std::to_string(A) + "].bytes",
                      Twine(Cfg.Args[A].Bytes.size()) +
                          " bytes, but the parameter has " +
                          Twine(K.Params[A].second));
    K.Configs.push_back(std::move(Cfg));
  }

  // Merge with the same kernel of another process.
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
    return R.fail(Field + ".params",
                  "the kernel '" + K.Symbol +
                      "' has another parameter layout in another process");
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
  if (Error E = parseJsonWithComments(Text, R.Path, Doc))
    return createStringError(inconvertibleErrorCode(),
                             toString(std::move(E)) +
                                 " (a truncated or damaged manifest)");
  if (!Doc.IsObject())
    return R.fail("<top>", "expected an object");
  std::string Format;
  if (Error E = R.str(Doc, "", "format", Format))
    return E;
  if (Format != capture::FormatName)
    return R.fail("format", "'" + Format + "' is not a capture of clang-astra "
                                           "(expected '" +
                                capture::FormatName + "')");
  int64_t Version = 0;
  if (Error E = R.integer(Doc, "", "version", Version, 0, true))
    return E;
  if (Version != capture::FormatVersion)
    return R.fail("version", "capture format version " + Twine(Version) +
                                 "; this clang-astra reads version " +
                                 Twine(capture::FormatVersion) +
                                 " (capture the program again with this "
                                 "clang-astra)");
  std::string State, Err;
  if (Error E = R.str(Doc, "", "state", State))
    return E;
  if (State != "running" && State != "exited")
    return R.fail("state", "expected \"running\" or \"exited\"");
  ++C.Processes;
  if (State == "running")
    ++C.Unfinished;
  if (Error E = R.str(Doc, "", "error", Err, false))
    return E;
  if (!Err.empty()) {
    C.Notes.push_back(R.Path + ": the capture library could not record: " +
                      Err);
    C.InjectionErrors.push_back(C.Notes.back());
  }
  std::vector<std::string> Program, Devices;
  if (Error E = R.strings(Doc, "", "program", Program))
    return E;
  if (C.Program.empty())
    C.Program = Program;
  if (Error E = R.strings(Doc, "", "devices", Devices))
    return E;
  for (const std::string &D : Devices)
    if (!is_contained(C.Devices, D))
      C.Devices.push_back(D);
  uint64_t MaxBytes = 0, Bytes = 0, Skipped = 0;
  if (Error E = R.integer(Doc, "", "max_bytes", MaxBytes, 0))
    return E;
  if (Error E = R.integer(Doc, "", "contents_bytes", Bytes, 0))
    return E;
  if (Error E = R.integer(Doc, "", "contents_skipped", Skipped, 0))
    return E;
  C.MaxBytes = std::max(C.MaxBytes, MaxBytes);
  C.ContentsBytes += Bytes;
  C.ContentsSkipped += Skipped;
  auto Ks = R.get(Doc, "", "kernels", true);
  if (!Ks)
    return Ks.takeError();
  if (!(*Ks)->IsArray())
    return R.fail("kernels", "expected an array");
  unsigned I = 0;
  for (const JValue &K : (*Ks)->GetArray())
    if (Error E = readKernel(K, "kernels[" + std::to_string(I++) + "]"))
      return E;
  return Error::success();
}

Error readSummary(Capture &C, StringRef Path) {
  auto Text = readFile(Path);
  if (!Text)
    return Text.takeError();
  rapidjson::Document Doc;
  if (Error E = parseJsonWithComments(*Text, Path, Doc))
    return E;
  JsonFieldReader R(Path);
  std::string Format;
  int64_t Version = 0;
  if (Error E = R.str(Doc, "", "format", Format))
    return E;
  if (Error E = R.integer(Doc, "", "version", Version, 0, true))
    return E;
  if (Format != capture::FormatName || Version != capture::FormatVersion)
    return R.fail("version", "not a capture summary of version " +
                                 Twine(capture::FormatVersion));
  CaptureRun Run;
  if (Error E = R.strings(Doc, "", "command", Run.Command))
    return E;
  auto Exit = R.get(Doc, "", "exit", true);
  if (!Exit)
    return Exit.takeError();
  int64_t Code = -1, Sig = -1;
  if (Error E = R.integer(**Exit, "exit", "code", Code, 0))
    return E;
  if (Error E = R.integer(**Exit, "exit", "signal", Sig, 0))
    return E;
  if (Code >= 0)
    Run.ExitCode = int(Code);
  if (Sig >= 0)
    Run.Signal = int(Sig);
  if (Error E = R.number(Doc, "", "seconds", Run.Seconds))
    return E;
  C.Run = Run;
  return Error::success();
}

} // namespace

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
