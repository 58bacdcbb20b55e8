// Text columns for the tools' tables: a printf-formatted number, and a
// string padded to a width on the right or the left.
#ifndef LNV_HARNESS_TEXT_COLUMNS_H_
#define LNV_HARNESS_TEXT_COLUMNS_H_

#include <cstddef>
#include <cstdio>
#include <string>

namespace lnv {

inline std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

inline std::string Pad(std::string s, std::size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

inline std::string PadLeft(std::string s, std::size_t w) {
  if (s.size() < w) s.insert(0, w - s.size(), ' ');
  return s;
}

}  // namespace lnv

#endif  // LNV_HARNESS_TEXT_COLUMNS_H_
