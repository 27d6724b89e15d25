//===- JsonMapTest.cpp - One mapping reads and writes a format ------------===//
#include "astra/Support/JsonMap.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace astra;
using namespace llvm;

namespace astra {
namespace {

enum class Color { Red, Green };

struct Inner {
  std::string Name;
  std::optional<double> Speed;
  std::vector<uint64_t> Seeds;
};

struct Outer {
  unsigned Runs = 5;
  int Offset = 0;
  bool Flag = false;
  double Ratio = 0;
  Color C = Color::Red;
  std::string Cubin;
  Inner In;
  std::optional<Inner> Maybe;
  std::vector<Inner> List;
  std::map<std::string, std::map<std::string, std::string>> Metrics;
};

void mapJson(JsonIO &IO, Color &C) {
  IO.enumeration<Color>(C, {{"red", Color::Red}, {"green", Color::Green}});
}

void mapJson(JsonIO &IO, Inner &I) {
  IO.object([&] {
    IO.required("name", I.Name);
    IO.optional("speed", I.Speed);
    IO.optional("seeds", I.Seeds);
  });
}

void mapJson(JsonIO &IO, Outer &O) {
  IO.object([&] {
    IO.writeOnly("version", 1);
    IO.optional("runs", O.Runs, atLeast(1));
    IO.optional("offset", O.Offset);
    IO.optional("flag", O.Flag);
    IO.optional("ratio", O.Ratio, [](double R) {
      return R > 1 ? std::string("must be at most 1") : std::string();
    });
    IO.required("color", O.C);
    IO.nonEmpty("cubin", O.Cubin);
    IO.required("in", O.In);
    IO.optional("maybe", O.Maybe);
    IO.optional("list", O.List);
    IO.optional("metrics", O.Metrics);
  });
}

Outer sample() {
  Outer O;
  O.Runs = 7;
  O.Offset = -3;
  O.Flag = true;
  O.Ratio = 0.1;
  O.C = Color::Green;
  O.In = {"a", 2.5, {1, 18446744073709551615ull}};
  O.List = {{"b", std::nullopt, {}}, {"c", 1e-7, {3}}};
  O.Metrics["k"]["m"] = "9";
  return O;
}

/// What the same struct gives written by hand with JsonWriter.
std::string byHand(const Outer &O) {
  JsonWriter W;
  auto Inner_ = [&](const Inner &I) {
    W.objectBegin();
    W.field("name", I.Name);
    W.field("speed", I.Speed);
    W.key("seeds");
    W.arrayBegin();
    for (uint64_t S : I.Seeds)
      W.value((unsigned long long)S);
    W.arrayEnd();
    W.objectEnd();
  };
  W.objectBegin();
  W.field("version", 1);
  W.field("runs", O.Runs);
  W.field("offset", O.Offset);
  W.field("flag", O.Flag);
  W.field("ratio", O.Ratio);
  W.field("color", O.C == Color::Red ? "red" : "green");
  if (!O.Cubin.empty())
    W.field("cubin", O.Cubin);
  W.key("in");
  Inner_(O.In);
  W.key("maybe");
  if (O.Maybe)
    Inner_(*O.Maybe);
  else
    W.null();
  W.key("list");
  W.arrayBegin();
  for (const Inner &I : O.List)
    Inner_(I);
  W.arrayEnd();
  W.key("metrics");
  W.objectBegin();
  for (auto &[K, M] : O.Metrics) {
    W.key(K);
    W.objectBegin();
    for (auto &[N, V] : M)
      W.field(N, V);
    W.objectEnd();
  }
  W.objectEnd();
  W.objectEnd();
  return W.str();
}

Expected<Outer> read(StringRef Text) {
  rapidjson::Document D;
  if (Error E = parseJsonWithComments(Text, "o.json", D))
    return E;
  Outer O;
  if (Error E = readJson(D, "o.json", O))
    return E;
  return O;
}

std::string err(StringRef Text) {
  auto O = read(Text);
  return O ? "parsed" : toString(O.takeError());
}

TEST(JsonMapTest, WritesWhatJsonWriterWrites) {
  Outer O = sample();
  EXPECT_EQ(writeJson(O), byHand(O));
  O.Cubin = "elf";
  O.Maybe = Inner{"m", std::nullopt, {}};
  EXPECT_EQ(writeJson(O), byHand(O));
  EXPECT_NE(writeJson(O).find("\"cubin\": \"elf\""), std::string::npos);
  EXPECT_EQ(writeJson(Outer()).find("cubin"), std::string::npos)
      << "empty: not written";
}

TEST(JsonMapTest, ReadsWhatItWrites) {
  Outer O = sample();
  O.Maybe = Inner{"m", 3.0, {4}};
  std::string Text = writeJson(O);
  auto Back = read(Text);
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_EQ(writeJson(*Back), Text);
  EXPECT_EQ(Back->Offset, -3);
  EXPECT_EQ(Back->C, Color::Green);
  EXPECT_EQ(Back->In.Seeds[1], 18446744073709551615ull);
  ASSERT_TRUE(Back->Maybe);
  EXPECT_EQ(*Back->Maybe->Speed, 3.0);
  EXPECT_FALSE(Back->List[0].Speed);
  EXPECT_EQ(Back->Metrics["k"]["m"], "9");
}

TEST(JsonMapTest, AbsentAndNullKeepDefaults) {
  auto O = read(R"({"color": "red", "in": {"name": "x"}, "runs": null,
                   "maybe": null, "unknown": [1]})");
  ASSERT_TRUE(bool(O)) << toString(O.takeError());
  EXPECT_EQ(O->Runs, 5u);
  EXPECT_FALSE(O->Maybe);
  EXPECT_TRUE(O->In.Seeds.empty());
  // The version is written, not read: any value passes.
  EXPECT_EQ(err(R"({"version": "x", "color": "red", "in": {"name": "x"}})"),
            "parsed");
}

TEST(JsonMapTest, ErrorsNameTheFieldPath) {
  const char *Base = R"({"color": "red", "in": {"name": "x"}, )";
  auto With = [&](StringRef Rest) { return err((Base + Rest + "}").str()); };
  EXPECT_EQ(With(R"("runs": 0)"), "o.json: runs: must be at least 1");
  // The bound, not the type's range, speaks for a negative number.
  EXPECT_EQ(With(R"("runs": -1)"), "o.json: runs: must be at least 1");
  EXPECT_EQ(With(R"("runs": 4294967296)"),
            "o.json: runs: must be at most 4294967295");
  EXPECT_EQ(With(R"("runs": 1.5)"), "o.json: runs: expected an integer");
  EXPECT_EQ(With(R"("offset": -2147483649)"),
            "o.json: offset: must be at least -2147483648");
  EXPECT_EQ(With(R"("flag": 1)"), "o.json: flag: expected true or false");
  EXPECT_EQ(With(R"("ratio": "x")"), "o.json: ratio: expected a number");
  EXPECT_EQ(With(R"("ratio": 2)"), "o.json: ratio: must be at most 1");
  EXPECT_EQ(With(R"("list": [{"name": "a"}, {"name": "b", "seeds": [1, -2]}])"),
            "o.json: list[1].seeds[1]: must be at least 0");
  EXPECT_EQ(With(R"("list": [{"name": "a"}, {"speed": 1}])"),
            "o.json: list[1].name: missing");
  EXPECT_EQ(With(R"("list": [3])"), "o.json: list[0]: expected an object");
  EXPECT_EQ(With(R"("list": {})"), "o.json: list: expected an array");
  EXPECT_EQ(With(R"("maybe": {"name": 3})"),
            "o.json: maybe.name: expected a string");
  EXPECT_EQ(With(R"("metrics": {"k": {"m": 9}})"),
            "o.json: metrics.k.m: expected a string");
  EXPECT_EQ(err(R"({"color": "blue", "in": {"name": "x"}})"),
            "o.json: color: expected one of red, green, got 'blue'");
  EXPECT_EQ(err(R"({"in": {"name": "x"}})"), "o.json: color: missing");
  EXPECT_EQ(err("[]"), "o.json: <top>: expected an object");
}

TEST(JsonMapTest, TheFirstProblemWins) {
  // Both "runs" and "in.name" are wrong; the mapping reads runs first and
  // stops there.
  EXPECT_EQ(err(R"({"runs": 0, "color": "red", "in": {"name": 1}})"),
            "o.json: runs: must be at least 1");
}

} // namespace
} // namespace astra
