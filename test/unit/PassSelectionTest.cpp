#include "astra/Rewrite/Pass.h"

#include "gtest/gtest.h"

using namespace astra;
using namespace llvm;

namespace {

std::vector<std::string> select(std::vector<std::string> Items) {
  auto S = selectPasses(Items);
  if (!S) {
    ADD_FAILURE() << toString(S.takeError());
    return {};
  }
  return *S;
}

std::string selectError(std::vector<std::string> Items) {
  auto S = selectPasses(Items);
  return S ? "<selected>" : toString(S.takeError());
}

std::vector<std::string> allNames() {
  std::vector<std::string> N;
  for (const PassInfo &P : allPasses())
    N.push_back(P.Name);
  return N;
}

TEST(PassSelection, NamesRunWhereListedGlobsInRegistryOrder) {
  EXPECT_EQ(select({"fast-math", "restrict-const"}),
            (std::vector<std::string>{"fast-math", "restrict-const"}));
  // Listed twice: runs twice (grid-coarsen twice coarsens twice).
  EXPECT_EQ(select({"unroll", "unroll"}),
            (std::vector<std::string>{"unroll", "unroll"}));
  EXPECT_EQ(select({"*"}), allNames());
  // A glob adds what is not selected yet, where it stands.
  std::vector<std::string> Warp = select({"hoist", "warp-*"});
  EXPECT_EQ(Warp, (std::vector<std::string>{"hoist", "warp-reduce",
                                            "warp-scan", "warp-per-row"}));
  EXPECT_EQ(select({"warp-reduce", "warp-*"}),
            (std::vector<std::string>{"warp-reduce", "warp-scan",
                                      "warp-per-row"}));
  // Exclusions remove what came before, globs included.
  std::vector<std::string> NoWarp = select({"*", "-warp-*", "-fast-math"});
  EXPECT_EQ(NoWarp.size(), allNames().size() - 4);
  for (const std::string &P : NoWarp)
    EXPECT_TRUE(P != "fast-math" && P.rfind("warp-", 0) != 0) << P;
  // What comes after an exclusion is selected again.
  EXPECT_EQ(select({"*", "-*", "ldg"}), (std::vector<std::string>{"ldg"}));
  // Spaces around items, as in a config file's 'a, b'.
  EXPECT_EQ(select({" ldg ", " -ldg", "unroll"}),
            (std::vector<std::string>{"unroll"}));
}

TEST(PassSelection, WhatMatchesNothingIsAnError) {
  EXPECT_EQ(selectError({"fastmath"}),
            "--passes: unknown pass 'fastmath'; did you mean 'fast-math'? "
            "(--list-passes lists them)");
  EXPECT_EQ(selectError({"nothing-*"}),
            "--passes: 'nothing-*' matches no pass (--list-passes lists them)");
  EXPECT_EQ(selectError({"ldg", "-ldgx"}),
            "--passes: '-ldgx' matches no pass (--list-passes lists them)");
  EXPECT_EQ(selectError({"ldg", "-ldg"}), "--passes selects no pass");
  EXPECT_EQ(selectError({"ldg", "-"}), "--passes: '-' names no pass");
}

TEST(PassSelection, ParametersAreCheckedAgainstWhatPassesDeclare) {
  auto Check = [](std::map<std::string, std::string> P) {
    Error E = checkPassParams(P);
    return E ? toString(std::move(E)) : std::string("<ok>");
  };
  EXPECT_EQ(Check({{"unroll.factor", "4"}, {"vectorize.bytes", "8"},
                   {"hoist.speculate-loads", "1"},
                   {"block-size.threads", "256"}}),
            "<ok>");
  EXPECT_EQ(Check({{"unroll.factor", "abc"}}),
            "unroll.factor=abc: unroll.factor must be an integer from 2 to "
            "1024, not 'abc'");
  EXPECT_EQ(Check({{"unroll.factor", "4x"}}),
            "unroll.factor=4x: unroll.factor must be an integer from 2 to "
            "1024, not '4x'");
  EXPECT_EQ(Check({{"block-size.threads", "96"}}), "<ok>");
  EXPECT_EQ(Check({{"block-size.threads", "100"}}),
            "block-size.threads=100: block-size.threads must be a multiple of "
            "32 from 32 to 1024, not '100'");
  EXPECT_EQ(Check({{"vectorize.bytes", "4"}}),
            "vectorize.bytes=4: vectorize.bytes must be 8 or 16, not '4'");
  EXPECT_EQ(Check({{"ldg.assume-noalias", "2"}}),
            "ldg.assume-noalias=2: ldg.assume-noalias must be 0 or 1, not "
            "'2'");
  EXPECT_EQ(Check({{"unroll.fator", "4"}}),
            "unroll.fator=4: pass 'unroll' has no parameter 'fator'; did you "
            "mean 'factor'? (its parameters: factor, max-trip)");
  EXPECT_EQ(Check({{"grid-stride.x", "1"}}),
            "grid-stride.x=1: pass 'grid-stride' takes no parameters");
  EXPECT_NE(Check({{"nope.x", "1"}}).find("no pass named 'nope' (passes: "),
            std::string::npos);
  EXPECT_EQ(Check({{"unroll", "4"}}),
            "unroll=4: not of the form <pass>.<key>=<value>");
}

TEST(PassSelection, EveryDeclaredDefaultIsDocumentedAndAccepted) {
  for (const PassInfo &P : allPasses())
    for (const PassParam &Prm : P.Params) {
      EXPECT_FALSE(Prm.Help.empty()) << P.Name << "." << Prm.Key;
      EXPECT_FALSE(Prm.Default.empty()) << P.Name << "." << Prm.Key;
      // A numeric default must be a value the declaration accepts.
      int64_t V;
      if (!StringRef(Prm.Default).getAsInteger(10, V)) {
        Error E = checkPassParams({{P.Name + "." + Prm.Key, Prm.Default}});
        EXPECT_FALSE(bool(E)) << toString(std::move(E));
      }
    }
}

TEST(PassSelection, AddPassParamParsesTheArgument) {
  std::map<std::string, std::string> P;
  EXPECT_FALSE(bool(addPassParam("unroll.factor=8", P)));
  EXPECT_EQ(P["unroll.factor"], "8");
  Error E = addPassParam("unroll.factor", P);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(toString(std::move(E)),
            "--pass-opt=unroll.factor: not of the form <pass>.<key>=<value> "
            "(rewrite --list-pass-options lists them)");
  E = addPassParam("unroll.factor=", P);
  ASSERT_TRUE(bool(E));
  consumeError(std::move(E));
}

} // namespace
