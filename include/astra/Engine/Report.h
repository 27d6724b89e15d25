//===- Report.h - Job results as text for people ---------------*- C++ -*-===//
#ifndef ASTRA_ENGINE_REPORT_H
#define ASTRA_ENGINE_REPORT_H

#include "astra/Engine/Job.h"

#include "llvm/Support/raw_ostream.h"

namespace astra {

/// The verify report: one PASS/FAIL/ERROR line per run with its evidence,
/// the warnings, and a last line "PASS: ...", "FAIL (<kind>): ..." or
/// "ERROR: ...".
void printVerifyReport(llvm::raw_ostream &OS, const VerifyJob &J,
                       const JobResult &R);

/// The profile report: per shape set the median time with p10/p90 and MAD,
/// GB/s and share of the copy bandwidth, and with a candidate its numbers
/// and the speedup.
void printProfileReport(llvm::raw_ostream &OS, const VerifyJob &J,
                        const JobResult &R);

} // namespace astra

#endif
