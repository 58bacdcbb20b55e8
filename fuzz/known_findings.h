// Open findings that do not stop fuzz_ln: a list of finding-key globs, each
// with the reason it is open. A finding whose key matches is still written as
// a case file and printed once per key, but does not trap, so a run can look
// for what is new. The list is meant to shrink: fix the kernel or its claim,
// delete the line, and the finding traps again.
//
// File format: one entry a line, `PATTERN  REASON...`; '#' starts a comment.
// PATTERN is a shell glob (*, ?) over the key kernel|verdict|output|class
// (finding_class.h), e.g. `*|nan_mismatch|dx|*/g:huge/*`.
#ifndef LNV_FUZZ_KNOWN_FINDINGS_H_
#define LNV_FUZZ_KNOWN_FINDINGS_H_

#include <string>
#include <string_view>
#include <vector>

namespace lnv::fuzz {

struct KnownFinding {
  std::string pattern;
  std::string reason;
};

// Parses the format; false with a one-line *error (with the line number).
bool ParseKnownFindings(std::string_view text, std::vector<KnownFinding>* out, std::string* error);
bool ReadKnownFindings(const std::string& path, std::vector<KnownFinding>* out, std::string* error);

// The first entry whose pattern matches key, or nullptr.
const KnownFinding* MatchKnownFinding(const std::vector<KnownFinding>& known,
                                      const std::string& key);

}  // namespace lnv::fuzz

#endif  // LNV_FUZZ_KNOWN_FINDINGS_H_
