//===- InterruptGuard.h - Hold Ctrl-C until the user's files are safe -*- C++ -*-===//
//
// While a rewrite that is not yet accepted sits in a user's file, an
// interrupt must not end the process before the original is back. An
// InterruptGuard turns SIGINT, SIGTERM, SIGHUP and SIGQUIT into a flag for
// its lifetime; the work in between polls it, ends what it started, puts the
// files back, and the guard's destructor then raises the signal again with
// the handlers that were there before, so the process ends as the user
// asked.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SUPPORT_INTERRUPTGUARD_H
#define ASTRA_SUPPORT_INTERRUPTGUARD_H

#include <csignal>
#include <signal.h>

namespace astra {

class InterruptGuard {
public:
  InterruptGuard();
  /// Restores the earlier handlers; raises the signal that came, if any.
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard &) = delete;
  InterruptGuard &operator=(const InterruptGuard &) = delete;

  /// Non-zero once a signal came (ShellCommandOptions::Stop takes it).
  const volatile std::sig_atomic_t *flag() const;
  /// The signal that came, or 0.
  int signal() const;

private:
  static constexpr int Signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  struct sigaction Old[sizeof(Signals) / sizeof(Signals[0])];
};

} // namespace astra

#endif
