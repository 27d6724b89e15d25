//===- Diff.cpp -----------------------------------------------------------===//
#include "astra/Support/Diff.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace astra {

std::vector<StringRef> splitLinesKeepEnds(StringRef Text) {
  std::vector<StringRef> Lines;
  while (!Text.empty()) {
    size_t NL = Text.find('\n');
    if (NL == StringRef::npos) {
      Lines.push_back(Text);
      break;
    }
    Lines.push_back(Text.take_front(NL + 1));
    Text = Text.drop_front(NL + 1);
  }
  return Lines;
}

std::vector<DiffHunk> diffLines(StringRef OldText, StringRef NewText) {
  std::vector<StringRef> A = splitLinesKeepEnds(OldText);
  std::vector<StringRef> B = splitLinesKeepEnds(NewText);
  // Common prefix and suffix first: rewrites touch a few lines of big files.
  size_t Pre = 0;
  while (Pre < A.size() && Pre < B.size() && A[Pre] == B[Pre])
    ++Pre;
  size_t Suf = 0;
  while (Suf < A.size() - Pre && Suf < B.size() - Pre &&
         A[A.size() - 1 - Suf] == B[B.size() - 1 - Suf])
    ++Suf;
  const long N = long(A.size() - Pre - Suf), M = long(B.size() - Pre - Suf);
  auto a = [&](long I) { return A[Pre + I]; };
  auto b = [&](long J) { return B[Pre + J]; };

  // Myers' O((N+M)D) greedy algorithm, keeping each round's V for the
  // backtrack.
  const long Max = N + M;
  std::vector<std::vector<long>> Trace;
  std::vector<long> V(2 * Max + 2, 0);
  long Off = Max + 1;
  long FinalD = 0;
  for (long D = 0; D <= Max; ++D) {
    for (long K = -D; K <= D; K += 2) {
      long X;
      if (K == -D || (K != D && V[Off + K - 1] < V[Off + K + 1]))
        X = V[Off + K + 1];
      else
        X = V[Off + K - 1] + 1;
      long Y = X - K;
      while (X < N && Y < M && a(X) == b(Y)) {
        ++X;
        ++Y;
      }
      V[Off + K] = X;
      if (X >= N && Y >= M) {
        Trace.push_back(V);
        FinalD = D;
        goto Done;
      }
    }
    Trace.push_back(V);
  }
Done:
  // Backtrack into a list of (old index, new index) edit steps.
  struct Step {
    long X, Y; // Position before the step.
    bool Insert;
  };
  std::vector<Step> Edits;
  long X = N, Y = M;
  for (long D = FinalD; D > 0; --D) {
    const std::vector<long> &PV = Trace[D - 1];
    long K = X - Y;
    long PrevK;
    if (K == -D || (K != D && PV[Off + K - 1] < PV[Off + K + 1]))
      PrevK = K + 1;
    else
      PrevK = K - 1;
    long PrevX = PV[Off + PrevK];
    long PrevY = PrevX - PrevK;
    while (X > PrevX && Y > PrevY) {
      --X;
      --Y;
    }
    Edits.push_back({PrevX, PrevY, /*Insert=*/PrevK == K + 1});
    X = PrevX;
    Y = PrevY;
  }
  std::reverse(Edits.begin(), Edits.end());

  // Group consecutive edits into hunks.
  std::vector<DiffHunk> Hunks;
  for (const Step &S : Edits) {
    size_t OX = Pre + S.X, NY = Pre + S.Y;
    bool Extends = !Hunks.empty() &&
                   Hunks.back().OldBegin + Hunks.back().OldCount == OX &&
                   Hunks.back().NewBegin + Hunks.back().NewCount == NY;
    if (!Extends)
      Hunks.push_back({OX, 0, NY, 0});
    if (S.Insert)
      ++Hunks.back().NewCount;
    else
      ++Hunks.back().OldCount;
  }
  return Hunks;
}

std::string unifiedDiff(StringRef Old, StringRef New, StringRef OldLabel,
                        StringRef NewLabel, unsigned Context) {
  if (Old == New)
    return "";
  std::vector<StringRef> A = splitLinesKeepEnds(Old);
  std::vector<StringRef> B = splitLinesKeepEnds(New);
  std::vector<DiffHunk> Hunks = diffLines(Old, New);
  std::string Out;
  raw_string_ostream OS(Out);
  // A name with a space ends in a TAB, as git and GNU diff write it, so
  // that patch reads the whole name rather than stopping at the space.
  auto End = [](StringRef L) {
    return L.find_first_of(" \t") == StringRef::npos ? "\n" : "\t\n";
  };
  OS << "--- a/" << OldLabel << End(OldLabel) << "+++ b/" << NewLabel
     << End(NewLabel);
  auto Line = [&](char Tag, StringRef L) {
    OS << Tag << L;
    if (!L.ends_with("\n"))
      OS << "\n\\ No newline at end of file\n";
  };
  size_t I = 0;
  while (I < Hunks.size()) {
    // Merge hunks whose context would touch.
    size_t J = I;
    while (J + 1 < Hunks.size() &&
           Hunks[J + 1].OldBegin <=
               Hunks[J].OldBegin + Hunks[J].OldCount + 2 * Context)
      ++J;
    size_t OStart = Hunks[I].OldBegin > Context ? Hunks[I].OldBegin - Context : 0;
    size_t Lead = Hunks[I].OldBegin - OStart;
    size_t NStart = Hunks[I].NewBegin - Lead;
    size_t OEnd = std::min(A.size(), Hunks[J].OldBegin + Hunks[J].OldCount + Context);
    size_t Trail = OEnd - (Hunks[J].OldBegin + Hunks[J].OldCount);
    size_t NEnd = Hunks[J].NewBegin + Hunks[J].NewCount + Trail;
    OS << "@@ -" << (OEnd - OStart ? OStart + 1 : OStart) << "," << OEnd - OStart
       << " +" << (NEnd - NStart ? NStart + 1 : NStart) << "," << NEnd - NStart
       << " @@\n";
    size_t O = OStart;
    for (size_t H = I; H <= J; ++H) {
      for (; O < Hunks[H].OldBegin; ++O)
        Line(' ', A[O]);
      for (size_t K = 0; K < Hunks[H].OldCount; ++K)
        Line('-', A[Hunks[H].OldBegin + K]);
      for (size_t K = 0; K < Hunks[H].NewCount; ++K)
        Line('+', B[Hunks[H].NewBegin + K]);
      O = Hunks[H].OldBegin + Hunks[H].OldCount;
    }
    for (; O < OEnd; ++O)
      Line(' ', A[O]);
    I = J + 1;
  }
  return Out;
}

} // namespace astra
