//===- InterruptGuard.cpp -------------------------------------------------===//
#include "astra/Support/InterruptGuard.h"

#include <cstring>

namespace astra {

static volatile std::sig_atomic_t Caught = 0;

static void onSignal(int Sig) { Caught = Sig; }

InterruptGuard::InterruptGuard() {
  Caught = 0;
  struct sigaction SA;
  std::memset(&SA, 0, sizeof(SA));
  SA.sa_handler = onSignal;
  sigemptyset(&SA.sa_mask);
  for (unsigned I = 0; I < sizeof(Signals) / sizeof(Signals[0]); ++I) {
    sigaction(Signals[I], &SA, &Old[I]);
    // A signal ignored before (SIGHUP under nohup) stays ignored.
    if (Old[I].sa_handler == SIG_IGN)
      sigaction(Signals[I], &Old[I], nullptr);
  }
}

InterruptGuard::~InterruptGuard() {
  for (unsigned I = 0; I < sizeof(Signals) / sizeof(Signals[0]); ++I)
    sigaction(Signals[I], &Old[I], nullptr);
  if (int Sig = Caught) {
    Caught = 0;
    raise(Sig);
  }
}

const volatile std::sig_atomic_t *InterruptGuard::flag() const {
  return &Caught;
}

int InterruptGuard::signal() const { return Caught; }

} // namespace astra
