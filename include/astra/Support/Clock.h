//===- Clock.h - Timestamps for reports and caches -------------*- C++ -*-===//
#ifndef ASTRA_SUPPORT_CLOCK_H
#define ASTRA_SUPPORT_CLOCK_H

#include <ctime>
#include <string>

namespace astra {

/// Now as ISO 8601 in UTC ("2026-11-22T17:00:00Z"): what reports, the
/// scoreboard and the result cache record, comparable across machines.
inline std::string utcTimestamp() {
  char Buf[32];
  std::time_t Now = std::time(nullptr);
  std::strftime(Buf, sizeof(Buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&Now));
  return Buf;
}

} // namespace astra

#endif
