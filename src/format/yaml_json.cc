#include "format/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ty::format {

namespace {

int DigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

bool IsDigits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                         : (c >= '0' && c < static_cast<char>('0' + base));
    if (!ok) return false;
  }
  return true;
}

bool IsNullWord(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}
bool IsTrueWord(std::string_view s) { return s == "true" || s == "True" || s == "TRUE"; }
bool IsFalseWord(std::string_view s) { return s == "false" || s == "False" || s == "FALSE"; }

// YAML 1.2 core schema integer: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+.
bool ResolveInt(std::string_view s, nlohmann::json* out) {
  int base = 10;
  bool negative = false;
  std::string_view digits = s;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
    base = s[1] == 'x' ? 16 : 8;
    digits = s.substr(2);
  } else if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    digits = s.substr(1);
  }
  if (!IsDigits(digits, base)) return false;
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ec == std::errc() && end == digits.data() + digits.size()) {
    if (!negative && magnitude <= static_cast<uint64_t>(INT64_MAX)) {
      *out = static_cast<int64_t>(magnitude);
    } else if (!negative) {
      *out = magnitude;
    } else if (magnitude <= static_cast<uint64_t>(INT64_MAX) + 1) {
      *out = static_cast<int64_t>(0 - magnitude);
    } else {
      *out = -static_cast<double>(magnitude);
    }
    return true;
  }
  // Too large for 64 bits: keep the value approximately, as YAML readers do. Past a
  // double's range it stays text: JSON has no infinity (and stod would throw).
  double value = 0;
  for (char c : digits) value = value * base + DigitValue(c);
  if (!std::isfinite(value)) return false;
  *out = negative ? -value : value;
  return true;
}

// YAML 1.2 core schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool ResolveFloat(std::string_view s, nlohmann::json* out) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  if (i != s.size()) return false;
  // from_chars takes neither a leading '+' nor a missing digit before '.'.
  const bool negative = s[0] == '-';
  std::string_view body = (s[0] == '-' || s[0] == '+') ? s.substr(1) : s;
  std::string text = body[0] == '.' ? "0" : "";
  text.append(body);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves the value unset both ways: an underflow ("1e-999") reads as strtod's
    // nearest value; an overflow ("1e999") stays text, as above.
    value = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(value)) return false;
  }
  *out = negative ? -value : value;
  return true;
}

// Resolves a plain scalar under the core schema; strings otherwise.
nlohmann::json ResolvePlain(const std::string& s) {
  if (IsNullWord(s)) return nullptr;
  if (IsTrueWord(s)) return true;
  if (IsFalseWord(s)) return false;
  nlohmann::json number;
  if (ResolveInt(s, &number) || ResolveFloat(s, &number)) return number;
  return s;
}

// Nesting past this is refused: an alias inside its own anchor ("&a\nr: *a") makes the
// node graph a cycle, which recursed until the stack overflowed (fuzz/yaml_fuzzer.cc).
constexpr int kMaxYamlDepth = 200;

nlohmann::json ToJson(const YAML::Node& node, int depth = 0) {
  if (depth > kMaxYamlDepth) {
    throw YAML::Exception(YAML::Mark::null_mark(),
                          "nested deeper than 200 levels (an alias inside its own anchor?)");
  }
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      if (tag == "?") return ResolvePlain(node.Scalar());  // Plain, untagged.
      if (tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
          tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null") {
        return ResolvePlain(node.Scalar());
      }
      return node.Scalar();  // Quoted, block or !!str.
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const YAML::Node& child : node) out.push_back(ToJson(child, depth + 1));
      return out;
    }
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : YAML::Dump(kv.first);
        out[key] = ToJson(kv.second, depth + 1);
      }
      return out;
    }
  }
  return nullptr;
}

// --- Emitting ---------------------------------------------------------------

bool IsPlainSafe(const std::string& s) {
  if (s.empty() || !ResolvePlain(s).is_string()) return false;  // Would read back as non-string.
  // YAML 1.1 booleans: quote them too, so older readers (PyYAML, gcloud) agree.
  static const char* const kYaml11Words[] = {"y",  "Y",  "yes", "Yes", "YES", "n",   "N",   "no",
                                             "No", "NO", "on",  "On",  "ON",  "off", "Off", "OFF"};
  for (const char* w : kYaml11Words) {
    if (s == w) return false;
  }
  unsigned char first = static_cast<unsigned char>(s[0]);
  if (std::string_view("-?:,[]{}#&*!|>'\"%@`").find(static_cast<char>(first)) !=
      std::string_view::npos) {
    // '-' may start a plain scalar when a non-space follows ("--epochs=10").
    if (!(first == '-' && s.size() > 1 && s[1] != ' ')) return false;
  }
  if (s.back() == ' ' || s.back() == ':' || s[0] == ' ') return false;
  if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos) return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7F) return false;  // Newlines, tabs and other controls.
  }
  return true;
}

std::string Scalar(const nlohmann::json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return IsPlainSafe(s) ? s : v.dump();  // JSON escapes are valid YAML double-quoted escapes.
  }
  return v.dump();  // null, true/false, numbers.
}

bool IsInline(const nlohmann::json& v) { return !v.is_structured() || v.empty(); }

void Emit(const nlohmann::json& v, int indent, std::string& out);

// Emits the items of a non-empty sequence; each line starts at `indent`.
void EmitSequence(const nlohmann::json& v, int indent, std::string& out) {
  for (const nlohmann::json& item : v) {
    out.append(static_cast<size_t>(indent), ' ');
    out += '-';
    if (IsInline(item)) {
      out += ' ';
      out += Scalar(item);
      out += '\n';
    } else {
      // A nested block starts on the dash line: "- key: v" / "- - x".
      std::string nested;
      Emit(item, indent + 2, nested);
      out += ' ';
      out.append(nested, static_cast<size_t>(indent) + 2);
    }
  }
}

void EmitMap(const nlohmann::json& v, int indent, std::string& out) {
  for (auto it = v.begin(); it != v.end(); ++it) {
    out.append(static_cast<size_t>(indent), ' ');
    out += Scalar(nlohmann::json(it.key()));
    out += ':';
    const nlohmann::json& child = it.value();
    if (IsInline(child)) {
      out += ' ';
      out += Scalar(child);
      out += '\n';
    } else if (child.is_array()) {
      out += "\n";
      EmitSequence(child, indent, out);  // gcloud style: not indented under the key.
    } else {
      out += "\n";
      EmitMap(child, indent + 2, out);
    }
  }
}

void Emit(const nlohmann::json& v, int indent, std::string& out) {
  if (IsInline(v)) {
    out.append(static_cast<size_t>(indent), ' ');
    out += Scalar(v);
    out += '\n';
  } else if (v.is_array()) {
    EmitSequence(v, indent, out);
  } else {
    EmitMap(v, indent, out);
  }
}

}  // namespace

namespace {

// The offset of the first byte that is not part of well-formed UTF-8 (no overlong
// forms, no surrogates, at most U+10FFFF), or npos.
size_t FirstInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return i;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return i;
      cp = (cp << 6) | (cc & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace

Result<nlohmann::json> ParseYamlOrJson(std::string_view text) {
  nlohmann::json parsed =
      nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded()) return parsed;
  // YAML takes any bytes, JSON only UTF-8: strings of other bytes made every later
  // dump() throw (found by fuzz/yaml_fuzzer.cc).
  if (size_t bad = FirstInvalidUtf8(text); bad != std::string_view::npos) {
    return InvalidArgument("not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  // YAML's character set has no C0 controls but TAB, LF and CR; a NUL also makes
  // yaml-cpp guess UTF-16 and decode the rest into other bytes.
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      return InvalidArgument("a control character at byte " + std::to_string(i) +
                             " (YAML allows only TAB, LF and CR)");
    }
  }
  try {
    YAML::Node root = YAML::Load(std::string(text));
    nlohmann::json out = ToJson(root);
    // yaml-cpp writes some escapes as single bytes ("\N" as 0x85, "\xFF" as 0xFF),
    // which are not UTF-8: what would not dump is refused here, not later.
    try {
      (void)out.dump();
    } catch (const nlohmann::json::type_error&) {
      return InvalidArgument(
          "a string is not valid UTF-8 once its escapes are read (write the character "
          "itself instead of \\N or \\xNN)");
    }
    return out;
  } catch (const YAML::Exception& e) {
    size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
      // Looks like JSON: the JSON parser's message is the useful one.
      try {
        nlohmann::json ignored = nlohmann::json::parse(text.begin(), text.end());
        (void)ignored;
      } catch (const nlohmann::json::exception& je) {
        return InvalidArgument(std::string("invalid JSON: ") + je.what());
      }
    }
    return InvalidArgument("invalid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("invalid YAML: ") + e.what());
  }
}

std::string ToYaml(const nlohmann::json& value) {
  std::string out;
  Emit(value, 0, out);
  return out;
}

Result<nlohmann::json> ReadYamlOrJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read file " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return NotFound("cannot read file " + path);
  Result<nlohmann::json> parsed = ParseYamlOrJson(buffer.str());
  if (!parsed.ok()) return parsed.status().WithContext(path);
  return parsed;
}

}  // namespace ty::format
