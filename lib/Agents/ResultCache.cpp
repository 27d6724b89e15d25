//===- ResultCache.cpp ----------------------------------------------------===//
#include "astra/Agents/ResultCache.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Hash.h"
#include "astra/Support/Json.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace llvm;

namespace astra {

ResultCache::ResultCache(std::string D) : Dir(std::move(D)) {
  if (!Dir.empty())
    return;
  SmallString<256> P(cacheRootDirectory());
  if (P.empty())
    sys::path::system_temp_directory(/*ErasedOnReboot=*/false, P);
  sys::path::append(P, "results");
  Dir = std::string(P);
}

/// The local headers \p Text includes with quotes, resolved beside \p From
/// or in \p IncludeDirs, recursively; system (<...>) headers belong to the
/// toolchain, whose version is in the key already.
static void collectHeaders(StringRef From, StringRef Text,
                           ArrayRef<std::string> IncludeDirs,
                           std::map<std::string, std::string> &Out) {
  SmallVector<StringRef, 64> Lines;
  Text.split(Lines, '\n');
  for (StringRef L : Lines) {
    L = L.ltrim();
    if (!L.consume_front("#"))
      continue;
    L = L.ltrim();
    if (!L.consume_front("include"))
      continue;
    L = L.ltrim();
    if (!L.consume_front("\""))
      continue;
    StringRef Name = L.take_until([](char C) { return C == '"'; });
    std::vector<std::string> Dirs = {sys::path::parent_path(From).str()};
    Dirs.insert(Dirs.end(), IncludeDirs.begin(), IncludeDirs.end());
    for (const std::string &D : Dirs) {
      SmallString<256> P(D);
      sys::path::append(P, Name);
      sys::path::remove_dots(P, /*remove_dot_dot=*/true);
      if (!sys::fs::is_regular_file(P))
        continue;
      std::string Path(P);
      if (Out.count(Path))
        break;
      auto Body = readFile(Path);
      if (!Body) {
        consumeError(Body.takeError());
        break;
      }
      Out[Path] = *Body;
      collectHeaders(Path, Out[Path], IncludeDirs, Out);
      break;
    }
  }
}

std::string ResultCache::key(StringRef File, StringRef SpecPath,
                             ArrayRef<std::string> Command,
                             StringRef Options) {
  KeyHasher H;
  auto Add = [&](StringRef S) { H.add(S); };
  // v4: verification's inputs come from the counter-based generator
  // (docs/engine.md, "Inputs and seeds"); verdicts made on other values are
  // not reused.
  Add("clang-astra optimize result v4");
  Add(Options);
  std::vector<std::string> IncludeDirs;
  for (size_t I = 0; I < Command.size(); ++I) {
    Add(Command[I]);
    StringRef A = Command[I];
    if ((A == "-I" || A == "-iquote") && I + 1 < Command.size())
      IncludeDirs.push_back(Command[I + 1]);
    else if (A.starts_with("-I") && A.size() > 2)
      IncludeDirs.push_back(A.drop_front(2).str());
  }
  std::map<std::string, std::string> Texts;
  for (StringRef P : {File, SpecPath}) {
    auto T = readFile(P);
    Texts[P.str()] = T ? *T : "<unreadable>";
    if (!T)
      consumeError(T.takeError());
  }
  collectHeaders(File, Texts[File.str()], IncludeDirs, Texts);
  for (const auto &[Path, Text] : Texts) {
    Add(Path);
    Add(Text);
  }
  return H.hex();
}

/// File name of one GPU's entry: the name with anything but letters and
/// digits made '_', so it is a plain file name everywhere.
static std::string gpuFileName(StringRef Gpu) {
  std::string S;
  for (char C : Gpu)
    S += isAlnum(C) ? C : '_';
  return S + ".json";
}

static void writeFiles(JsonWriter &W, StringRef Key,
                       const std::map<std::string, std::string> &Files) {
  W.key(Key);
  W.objectBegin();
  for (const auto &[Path, Text] : Files)
    W.field(Path, Text);
  W.objectEnd();
}

Error ResultCache::store(StringRef Key, StringRef Gpu, const FileOutcome &O,
                         StringRef Date) const {
  JsonWriter W;
  W.objectBegin();
  W.field("version", 2);
  W.field("gpu", Gpu);
  W.field("date", Date);
  W.field("file", O.File);
  writeFiles(W, "original", O.Original);
  writeFiles(W, "final", O.Final);
  W.key("kernels");
  W.arrayBegin();
  for (const KernelReport &R : O.Kernels) {
    W.objectBegin();
    W.field("file", R.File);
    W.field("kernel", R.Kernel);
    W.field("diff", R.Diff);
    W.field("error", R.Error);
    W.field("no_winner_reason", R.Outcome.NoWinnerReason);
    W.field("stop_reason", R.Outcome.StopReason);
    W.key("baseline");
    writeEvaluationJson(W, R.Outcome.Baseline);
    if (R.Outcome.Winner) {
      const Candidate &C = *R.Outcome.Winner;
      W.key("winner");
      W.objectBegin();
      W.field("id", C.Id);
      W.field("origin", C.Origin);
      W.field("rationale", C.Rationale);
      W.key("lineage");
      W.arrayBegin();
      for (const std::string &L : C.Lineage)
        W.value(L);
      W.arrayEnd();
      W.key("params");
      W.objectBegin();
      for (const auto &[K, V] : C.Params)
        W.field(K, V);
      W.objectEnd();
      if (C.BlockThreads)
        W.field("block_threads", (long long)*C.BlockThreads);
      if (C.GridDivisor)
        W.field("grid_divisor", (long long)*C.GridDivisor);
      if (C.BlockXDivisor)
        W.field("block_x_divisor", (long long)*C.BlockXDivisor);
      if (C.BlockYDivisor)
        W.field("block_y_divisor", (long long)*C.BlockYDivisor);
      if (C.BlockRows) {
        W.field("row_divisor", (long long)C.RowDivisor.value_or(0));
        W.field("block_rows", (long long)*C.BlockRows);
      }
      if (C.Grid3) {
        W.field("grid3_a", C.Grid3->A);
        W.field("grid3_b", C.Grid3->B);
        W.field("grid3_c", C.Grid3->C);
        W.field("grid3_bx", (long long)C.Grid3->Bx);
        W.field("grid3_by", (long long)C.Grid3->By);
      }
      if (C.WarpRows)
        W.field("warp_rows", *C.WarpRows);
      writeFiles(W, "files", C.Files);
      W.key("evaluation");
      writeEvaluationJson(W, R.Outcome.WinnerEval);
      W.objectEnd();
    }
    W.objectEnd();
  }
  W.arrayEnd();
  W.objectEnd();

  SmallString<256> P(Dir);
  sys::path::append(P, Key);
  if (std::error_code EC = sys::fs::create_directories(P))
    return createStringError(EC,
                             "%s: cannot create the result cache directory: "
                             "%s (set ASTRA_CACHE_DIR to a writable directory "
                             "or pass --no-cache)",
                             P.c_str(), EC.message().c_str());
  sys::path::append(P, gpuFileName(Gpu));
  return writeFileAtomically(P, W.str());
}

namespace {
/// Reads what store() wrote; any surprise makes the entry unreadable.
struct Reader {
  bool OK = true;
  std::string str(const rapidjson::Value &V, const char *K) {
    if (V.IsObject() && V.HasMember(K) && V[K].IsString())
      return V[K].GetString();
    OK = false;
    return "";
  }
  double num(const rapidjson::Value &V, const char *K) {
    if (V.IsObject() && V.HasMember(K) && V[K].IsNumber())
      return V[K].GetDouble();
    OK = false;
    return 0;
  }
  std::map<std::string, std::string> files(const rapidjson::Value &V,
                                           const char *K) {
    std::map<std::string, std::string> Out;
    if (!V.IsObject() || !V.HasMember(K) || !V[K].IsObject()) {
      OK = false;
      return Out;
    }
    for (const auto &M : V[K].GetObject()) {
      if (!M.value.IsString()) {
        OK = false;
        continue;
      }
      Out[M.name.GetString()] = M.value.GetString();
    }
    return Out;
  }
  /// What writeEvaluationJson wrote (rooflines are absent when unknown).
  Evaluation evaluation(const rapidjson::Value &Parent, const char *K) {
    Evaluation E;
    if (!Parent.IsObject() || !Parent.HasMember(K) || !Parent[K].IsObject()) {
      OK = false;
      return E;
    }
    const rapidjson::Value &V = Parent[K];
    bool Verified = str(V, "status") ==
                    Evaluation::statusName(Evaluation::Status::Verified);
    E.S = Verified ? Evaluation::Status::Verified : Evaluation::Status::NotRun;
    E.MaxAbsError = num(V, "max_abs_error");
    E.MaxRelError = num(V, "max_rel_error");
    if (V.HasMember("seeds") && V["seeds"].IsArray())
      for (const auto &S : V["seeds"].GetArray())
        if (S.IsUint64())
          E.Seeds.push_back(S.GetUint64());
    if (!V.HasMember("timings") || !V["timings"].IsArray()) {
      OK = false;
      return E;
    }
    auto Optional = [](const rapidjson::Value &T, const char *Key) {
      return T.HasMember(Key) && T[Key].IsNumber() ? T[Key].GetDouble() : -1;
    };
    for (const auto &T : V["timings"].GetArray()) {
      ShapeTiming S;
      S.Shape = str(T, "shape");
      S.BaselineUs = num(T, "baseline_us");
      S.CandidateUs = num(T, "candidate_us");
      S.BaselineSpreadUs = num(T, "baseline_spread_us");
      S.CandidateSpreadUs = num(T, "candidate_spread_us");
      S.Bytes = num(T, "bytes");
      S.BaselineRoofline = Optional(T, "baseline_roofline");
      S.CandidateRoofline = Optional(T, "candidate_roofline");
      E.Timings.push_back(S);
    }
    return E;
  }
};
} // namespace

static std::optional<CachedOutcome> readEntry(StringRef Path) {
  auto Text = readFile(Path);
  if (!Text) {
    consumeError(Text.takeError());
    return std::nullopt;
  }
  rapidjson::Document D;
  if (Error E = checkJsonNesting(*Text)) {
    consumeError(std::move(E));
    return std::nullopt;
  }
  D.Parse(Text->data(), Text->size());
  if (D.HasParseError() || !D.IsObject())
    return std::nullopt;
  Reader R;
  CachedOutcome C;
  C.Gpu = R.str(D, "gpu");
  C.Date = R.str(D, "date");
  FileOutcome &O = C.Outcome;
  O.File = R.str(D, "file");
  O.Original = R.files(D, "original");
  O.Final = R.files(D, "final");
  if (!D.HasMember("kernels") || !D["kernels"].IsArray())
    return std::nullopt;
  for (const auto &K : D["kernels"].GetArray()) {
    KernelReport KR;
    KR.File = R.str(K, "file");
    KR.Kernel = R.str(K, "kernel");
    KR.Diff = R.str(K, "diff");
    KR.Error = R.str(K, "error");
    KR.Outcome.Kernel = KR.Kernel;
    KR.Outcome.NoWinnerReason = R.str(K, "no_winner_reason");
    KR.Outcome.StopReason = R.str(K, "stop_reason");
    KR.Outcome.Baseline = R.evaluation(K, "baseline");
    if (K.HasMember("winner")) {
      const rapidjson::Value &W = K["winner"];
      Candidate Cand;
      Cand.Id = R.str(W, "id");
      Cand.Origin = R.str(W, "origin");
      Cand.Rationale = R.str(W, "rationale");
      if (W.HasMember("lineage") && W["lineage"].IsArray())
        for (const auto &L : W["lineage"].GetArray())
          if (L.IsString())
            Cand.Lineage.push_back(L.GetString());
      Cand.Params = R.files(W, "params");
      if (W.HasMember("block_threads") && W["block_threads"].IsInt64())
        Cand.BlockThreads = W["block_threads"].GetInt64();
      if (W.HasMember("grid_divisor") && W["grid_divisor"].IsInt64())
        Cand.GridDivisor = W["grid_divisor"].GetInt64();
      if (W.HasMember("block_x_divisor") && W["block_x_divisor"].IsInt64())
        Cand.BlockXDivisor = W["block_x_divisor"].GetInt64();
      if (W.HasMember("block_y_divisor") && W["block_y_divisor"].IsInt64())
        Cand.BlockYDivisor = W["block_y_divisor"].GetInt64();
      if (W.HasMember("block_rows") && W["block_rows"].IsInt64() &&
          W.HasMember("row_divisor") && W["row_divisor"].IsInt64()) {
        Cand.RowDivisor = W["row_divisor"].GetInt64();
        Cand.BlockRows = W["block_rows"].GetInt64();
      }
      if (W.HasMember("grid3_a") && W["grid3_a"].IsString() &&
          W.HasMember("grid3_b") && W["grid3_b"].IsString() &&
          W.HasMember("grid3_c") && W["grid3_c"].IsString() &&
          W.HasMember("grid3_bx") && W["grid3_bx"].IsInt64() &&
          W.HasMember("grid3_by") && W["grid3_by"].IsInt64())
        Cand.Grid3 = Delinearized{W["grid3_a"].GetString(),
                                  W["grid3_b"].GetString(),
                                  W["grid3_c"].GetString(),
                                  W["grid3_bx"].GetInt64(),
                                  W["grid3_by"].GetInt64()};
      if (W.HasMember("warp_rows") && W["warp_rows"].IsString())
        Cand.WarpRows = std::string(W["warp_rows"].GetString());
      FileOverlay Files;
      for (auto &[P, T] : R.files(W, "files"))
        Files[P] = T;
      Cand.Files = std::move(Files);
      KR.Outcome.WinnerEval = R.evaluation(W, "evaluation");
      KR.Outcome.Winner = std::move(Cand);
    }
    O.Kernels.push_back(std::move(KR));
  }
  if (!R.OK)
    return std::nullopt;
  return C;
}

std::optional<CachedOutcome> ResultCache::lookup(StringRef Key,
                                                 StringRef Gpu) const {
  SmallString<256> KeyDir(Dir);
  sys::path::append(KeyDir, Key);
  std::vector<std::string> Paths;
  if (!Gpu.empty()) {
    SmallString<256> P(KeyDir);
    sys::path::append(P, gpuFileName(Gpu));
    Paths.push_back(std::string(P));
  } else {
    std::error_code EC;
    for (sys::fs::directory_iterator It(KeyDir, EC), End; It != End && !EC;
         It.increment(EC))
      if (StringRef(It->path()).ends_with(".json"))
        Paths.push_back(It->path());
    std::sort(Paths.begin(), Paths.end()); // Deterministic, then newest.
  }
  std::optional<CachedOutcome> Best;
  for (const std::string &P : Paths) {
    if (!sys::fs::exists(P))
      continue;
    std::optional<CachedOutcome> C = readEntry(P);
    if (!C)
      continue;
    // The key covers the inputs; a file the entry would write must still
    // hold what the entry started from, or writing it would lose edits.
    bool Current = true;
    for (const auto &[Path, Text] : C->Outcome.Original) {
      auto Now = readFile(Path);
      Current &= Now && *Now == Text;
      if (!Now)
        consumeError(Now.takeError());
    }
    if (Current && (!Best || C->Date > Best->Date))
      Best = std::move(C);
  }
  return Best;
}

} // namespace astra
