#include "fuzz/known_findings.h"

#include <fstream>
#include <sstream>

#include "impls/registry.h"

namespace lnv::fuzz {

bool ParseKnownFindings(std::string_view text, std::vector<KnownFinding>* out, std::string* error) {
  out->clear();
  std::istringstream in{std::string(text)};
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto begin = line.find_first_not_of(" \t");
    if (begin == std::string::npos || line[begin] == '#') continue;
    const auto end = line.find_first_of(" \t", begin);
    KnownFinding k;
    k.pattern = line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (end != std::string::npos) {
      const auto r = line.find_first_not_of(" \t", end);
      if (r != std::string::npos) k.reason = line.substr(r);
    }
    if (k.pattern.find('|') == std::string::npos || k.reason.empty()) {
      *error =
          "line " + std::to_string(n) + ": expected `kernel|verdict|output|class-glob  reason`";
      return false;
    }
    out->push_back(std::move(k));
  }
  return true;
}

bool ReadKnownFindings(const std::string& path, std::vector<KnownFinding>* out,
                       std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot read";
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (!ParseKnownFindings(text.str(), out, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

const KnownFinding* MatchKnownFinding(const std::vector<KnownFinding>& known,
                                      const std::string& key) {
  for (const KnownFinding& k : known) {
    if (GlobMatch(k.pattern, key)) return &k;
  }
  return nullptr;
}

}  // namespace lnv::fuzz
