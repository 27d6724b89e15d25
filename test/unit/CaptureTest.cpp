// The pure logic of `clang-astra capture` and of specs drafted from a
// capture: kernel names and selection, blob hashes, reading and merging
// manifests, captured(...) inits, replaying captured bytes, weights.
#include "astra/Agents/Candidate.h"
#include "astra/Capture/Capture.h"
#include "astra/Capture/CaptureFormat.h"
#include "astra/Engine/Inputs.h"
#include "astra/Engine/RunPlan.h"
#include "astra/Spec/Spec.h"
#include "astra/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <cstring>

using namespace astra;
using namespace llvm;

namespace {

TEST(CaptureFormat, KernelNamesDropReturnTypeAndParameters) {
  using capture::kernelNameOf;
  EXPECT_EQ(kernelNameOf("rownorm(float*, float const*, float const*, int, "
                         "int, float)"),
            "rownorm");
  EXPECT_EQ(kernelNameOf("void ns::scale<float, 2>(float*, int)"),
            "ns::scale<float, 2>");
  EXPECT_EQ(kernelNameOf("void k<(anonymous namespace)::T>(int)"),
            "k<(anonymous namespace)::T>");
  EXPECT_EQ(kernelNameOf("extern_c_kernel"), "extern_c_kernel");
}

TEST(CaptureFormat, SelectorsMatchNamesInstancesAndSymbols) {
  using capture::kernelSelected;
  const std::string Sym = "_ZN2ns5scaleIfLi2EEEvPfi";
  const std::string Name = "ns::scale<float, 2>";
  EXPECT_TRUE(kernelSelected(Sym, Sym, Name));
  EXPECT_TRUE(kernelSelected("ns::scale<float,2>", Sym, Name));
  EXPECT_TRUE(kernelSelected("scale<float, 2>", Sym, Name));
  EXPECT_TRUE(kernelSelected("scale", Sym, Name));
  EXPECT_TRUE(kernelSelected("ns::scale", Sym, Name));
  EXPECT_FALSE(kernelSelected("scale<float, 4>", Sym, Name));
  EXPECT_FALSE(kernelSelected("cale", Sym, Name));
  EXPECT_FALSE(kernelSelected("other::scale", Sym, Name));
}

TEST(CaptureFormat, ContentHashTellsContentsApart) {
  std::vector<unsigned char> A(1000, 7), B = A;
  B[999] = 8;
  EXPECT_NE(capture::contentHash(A.data(), A.size()),
            capture::contentHash(B.data(), B.size()));
  // The size is part of the hash: trailing zeros change it.
  std::vector<unsigned char> Z(16, 0);
  EXPECT_NE(capture::contentHash(Z.data(), 8),
            capture::contentHash(Z.data(), 16));
  EXPECT_EQ(capture::hashHex(0x1f), "000000000000001f");
  EXPECT_EQ(capture::blobPath(0xabc), "blobs/0000000000000abc.bin");
}

/// A capture folder in a fresh temporary directory.
class CaptureDir : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("astra-capture-test", Dir));
    ASSERT_FALSE(sys::fs::create_directory(Dir + "/blobs"));
  }
  void TearDown() override { sys::fs::remove_directories(Dir); }
  void write(StringRef Name, StringRef Text) {
    ASSERT_FALSE(errorToBool(writeFileAtomically((Dir + "/" + Name).str(), Text)));
  }
  /// A manifest of one process with kernel k(float *x, int n): one
  /// configuration of \p Launches launches at n = \p N, x's contents \p Blob.
  std::string manifest(int Launches, int N, StringRef Blob = "",
                       StringRef Hash = "", int Version = 1) {
    std::string NHex;
    for (int I = 0; I < 4; ++I) {
      char B[3];
      std::snprintf(B, sizeof B, "%02x", (N >> (8 * I)) & 0xff);
      NHex += B;
    }
    std::string Contents =
        Blob.empty() ? "null, \"contents_missing\": \"over the budget\""
                     : "{\"blob\": \"" + Blob.str() + "\", \"size\": " +
                           std::to_string(4 * N) + ", \"hash\": \"" +
                           Hash.str() + "\"}";
    return "{\"format\": \"clang-astra-capture\", \"version\": " +
           std::to_string(Version) +
           ", \"pid\": 1, \"program\": [\"./app\"], \"state\": \"exited\", "
           "\"devices\": [\"GPU\"], \"selection\": [], \"max_bytes\": 100, "
           "\"max_launches\": 0, \"contents_bytes\": 0, "
           "\"contents_skipped\": 0, \"kernels\": [{\"name\": \"_Z1kPfi\", "
           "\"demangled\": \"k(float*, int)\", \"launches\": " +
           std::to_string(Launches) +
           ", \"launches_not_recorded\": 0, \"params\": [{\"offset\": 0, "
           "\"size\": 8}, {\"offset\": 8, \"size\": 4}], \"configs\": "
           "[{\"launches\": " +
           std::to_string(Launches) +
           ", \"first_launch\": 1, \"api\": \"cuLaunchKernel\", \"grid\": "
           "[4, 1, 1], \"block\": [128, 1, 1], \"shmem\": 0, \"streams\": "
           "[0], \"args\": [{\"bytes\": \"0010000000000000\", \"pointer\": "
           "{\"base\": \"0x1000\", \"size\": " +
           std::to_string(4 * N) +
           ", \"offset\": 0, \"memory\": \"device\"}, \"contents\": " +
           Contents + "}, {\"bytes\": \"" + NHex + "\"}]}]}]}\n";
  }
  SmallString<128> Dir;
};

TEST_F(CaptureDir, ProcessesMergeIntoOneViewOrderedByLaunches) {
  write("launches-1.json", manifest(3, 256));
  write("launches-2.json", manifest(2, 256)); // Same configuration.
  write("launches-3.json", manifest(7, 64));
  auto C = readCapture(Dir);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Processes, 3u);
  ASSERT_EQ(C->Kernels.size(), 1u);
  const CapturedKernel &K = C->Kernels[0];
  EXPECT_EQ(K.Name, "k");
  EXPECT_EQ(K.Launches, 12u);
  ASSERT_EQ(K.Configs.size(), 2u);
  EXPECT_EQ(K.Configs[0].Launches, 7u); // n = 64, most launched first.
  EXPECT_EQ(K.Configs[0].Args[1].asInt(true), 64);
  EXPECT_EQ(K.Configs[1].Launches, 5u);
  EXPECT_EQ(K.Configs[1].Args[0].Pointer->extent(), 1024u);
  EXPECT_EQ(K.Configs[1].Args[0].ContentsMissing, "over the budget");
}

TEST_F(CaptureDir, BadManifestsSayWhatIsWrong) {
  write("launches-1.json", manifest(1, 8, "", "", 2));
  auto C = readCapture(Dir);
  ASSERT_FALSE(bool(C));
  EXPECT_NE(toString(C.takeError()).find("capture format version 2"),
            std::string::npos);
  std::string M = manifest(1, 8);
  write("launches-1.json", M.substr(0, M.size() / 2));
  C = readCapture(Dir);
  ASSERT_FALSE(bool(C));
  EXPECT_NE(toString(C.takeError()).find("truncated or damaged"),
            std::string::npos);
  sys::fs::remove(Dir + "/launches-1.json");
  C = readCapture(Dir);
  ASSERT_FALSE(bool(C));
  EXPECT_NE(toString(C.takeError()).find("not a capture"), std::string::npos);
}

TEST_F(CaptureDir, ManifestErrorsNameTheField) {
  auto Err = [&](StringRef From, StringRef To) {
    std::string M = manifest(1, 8);
    size_t P = M.find(From.str());
    EXPECT_NE(P, std::string::npos) << From.str();
    if (P != std::string::npos)
      M.replace(P, From.size(), To.str());
    write("launches-1.json", M);
    auto C = readCapture(Dir);
    std::string E = C ? "read" : toString(C.takeError());
    // The message starts with the manifest's path.
    StringRef Rest(E);
    Rest.consume_front((Dir + "/").str());
    return Rest.str();
  };
  EXPECT_EQ(Err("\"offset\": 0, \"memory\"", "\"offset\": 40, \"memory\""),
            "launches-1.json: kernels[0].configs[0].args[0].pointer.offset: "
            "lies past the allocation's end");
  EXPECT_EQ(Err("\"grid\": [4, 1, 1]", "\"grid\": [4, -1, 1]"),
            "launches-1.json: kernels[0].configs[0].grid: expected three "
            "non-negative integers");
  EXPECT_EQ(Err("\"streams\": [0]", "\"streams\": [0, -1]"),
            "launches-1.json: kernels[0].configs[0].streams[1]: must be at "
            "least 0");
  EXPECT_EQ(Err("\"offset\": 8, \"size\": 4}", "\"offset\": 8, \"size\": 2}"),
            "launches-1.json: kernels[0].configs[0].args[1].bytes: 4 bytes, "
            "but the parameter has 2");
  EXPECT_EQ(Err("\"size\": 8}", "\"size\": 0}"),
            "launches-1.json: kernels[0].params[0].size: must be at least 1");
  EXPECT_EQ(Err("\"state\": \"exited\"", "\"state\": \"done\""),
            "launches-1.json: state: expected \"running\" or \"exited\"");
  EXPECT_EQ(Err("\"launches_not_recorded\": 0",
                "\"launches_not_recorded\": 0.5"),
            "launches-1.json: kernels[0].launches_not_recorded: expected an "
            "integer");
  // Two processes that disagree on a kernel's parameters.
  write("launches-2.json", manifest(1, 8));
  EXPECT_EQ(Err("\"offset\": 8, \"size\": 4}", "\"offset\": 16, \"size\": 4}"),
            "launches-2.json: kernels[0].params: the kernel '_Z1kPfi' has "
            "another parameter layout in another process");
}

TEST_F(CaptureDir, BlobsAreCheckedAgainstTheirHash) {
  std::vector<float> X(16);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = float(I) * 0.5f;
  uint64_t H = capture::contentHash(X.data(), 64);
  std::string Blob = capture::blobPath(H);
  write(Blob, StringRef(reinterpret_cast<const char *>(X.data()), 64));
  write("launches-1.json", manifest(1, 16, Blob, capture::hashHex(H)));
  auto C = readCapture(Dir);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  const CapturedArg &A = C->Kernels[0].Configs[0].Args[0];
  EXPECT_FALSE(errorToBool(checkBlob(*C, A)));
  write(Blob, StringRef(reinterpret_cast<const char *>(X.data()), 60));
  Error E = checkBlob(*C, A);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("truncated blob"), std::string::npos);
}

TEST_F(CaptureDir, CapturedInitReplaysTheProgramsBytesInItsOwnRun) {
  std::vector<float> X(16);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = 100.0f + float(I);
  write("blobs/x.bin", StringRef(reinterpret_cast<const char *>(X.data()), 64));
  std::string SpecPath = (Dir + "/k.cu.astra.json").str();
  std::string Text = R"J({"version": 1, "kernels": {"k": {
    "shapes": {"c1": {"n": 16}, "c2": {"n": 8}},
    "args": {"x": {"dtype": "f32", "count": "n", "role": "input",
                   "init": "captured(normal(0, 1))"},
             "n": {"value": "n"}},
    "launch": {"grid": 1, "block": 128},
    "weights": {"c1": 3, "c2": 1},
    "capture": {"dir": ".", "sets": {"c1": {"x": "blobs/x.bin"}}}}}})J";
  auto F = parseSpec(Text, SpecPath);
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  const KernelSpec &S = F->Kernels[0];
  EXPECT_EQ(S.weight("c1"), 3);
  EXPECT_EQ(S.capturedBlobs("c1").size(), 1u);
  EXPECT_TRUE(S.capturedBlobs("c2").empty());

  auto Captured = generateInputs(S, S.Shapes[0].Vars, 1, ValueMode::Captured);
  ASSERT_TRUE(bool(Captured)) << toString(Captured.takeError());
  EXPECT_EQ(std::memcmp(Captured->at("x").data(), X.data(), 64), 0);
  // Other seeds draw from the generator it wraps.
  auto Random = generateInputs(S, S.Shapes[0].Vars, 1, ValueMode::Spec);
  ASSERT_TRUE(bool(Random));
  EXPECT_NE(std::memcmp(Random->at("x").data(), X.data(), 64), 0);

  // One captured run per set that has contents, after the shape sets.
  auto Plan = planRuns(S, {}, {1, 2}, /*Adversarial=*/false);
  ASSERT_TRUE(bool(Plan));
  ASSERT_EQ(Plan->size(), 3u);
  EXPECT_EQ((*Plan)[2].Name, "c1/captured");
  EXPECT_EQ((*Plan)[2].Values, ValueMode::Captured);
  EXPECT_EQ((*Plan)[2].Seeds.size(), 1u);
}

TEST_F(CaptureDir, CapturedSpecErrorsNameTheField) {
  write("blobs/x.bin", std::string(8, '\0'));
  std::string SpecPath = (Dir + "/k.cu.astra.json").str();
  auto Errors = [&](StringRef Init, StringRef Weights) {
    std::string Text = std::string(R"J({"version": 1, "kernels": {"k": {
      "shapes": {"c1": {"n": 16}, "c2": {"n": 8}},
      "args": {"x": {"dtype": "f32", "count": "n", "role": "input",
                     "init": ")J") + Init.str() + R"J("}, "n": {"value": "n"}},
      "launch": {"grid": 1, "block": 128},
      "weights": )J" + Weights.str() + R"J(,
      "capture": {"dir": ".", "sets": {"c1": {"x": "blobs/x.bin"}}}}}})J";
    auto F = parseSpec(Text, SpecPath);
    return F ? std::string("<loaded>") : toString(F.takeError());
  };
  // The blob holds 8 bytes; x takes 64 in set c1.
  EXPECT_NE(Errors("captured(normal(0, 1))", R"({"c1": 1, "c2": 1})")
                .find("the blob has 8 bytes, but 'x' takes 64"),
            std::string::npos);
  EXPECT_NE(Errors("normal(0, 1)", R"({"c1": 1, "c2": 1})")
                .find("write captured(normal(0, 1))"),
            std::string::npos);
  EXPECT_NE(Errors("captured(normal(0, 1))", R"({"c1": 1})")
                .find("no weight for shape set 'c2'"),
            std::string::npos);
}

TEST(WeightedSpeedup, IsTheProgramsTimeBeforeOverAfter) {
  Evaluation E;
  E.Timings.push_back({"c1", 10, 5}); // 2x, launched 1000 times.
  E.Timings.back().CandidateUs = 5;
  ShapeTiming T2;
  T2.Shape = "c2";
  T2.BaselineUs = 100;
  T2.CandidateUs = 100; // 1x, launched 10 times.
  E.Timings.push_back(T2);
  auto W = E.weightedSpeedup({{"c1", 1000}, {"c2", 10}});
  ASSERT_TRUE(W.has_value());
  // (1000 * 10 + 10 * 100) / (1000 * 5 + 10 * 100) = 11000 / 6000.
  EXPECT_NEAR(*W, 11000.0 / 6000.0, 1e-12);
  EXPECT_FALSE(E.weightedSpeedup({}).has_value());
  EXPECT_FALSE(E.weightedSpeedup({{"c3", 1}}).has_value());
}

} // namespace
