#include "wire/wire_json.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace ty::wire::internal {

using namespace model;  // The domain the wire dialects read and write.

std::string JoinPath(const std::string& parent, std::string_view child) {
  if (parent.empty()) return std::string(child);
  std::string out = parent;
  out += '.';
  out += child;
  return out;
}

std::string IndexPath(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;  // Count every byte that is not a continuation byte.
  }
  return n;
}

std::string SnakeCase(std::string_view camel) {
  std::string out;
  for (char c : camel) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

bool IsGcsUri(std::string_view uri) {
  constexpr std::string_view kScheme = "gs://";
  if (uri.substr(0, kScheme.size()) != kScheme) return false;
  std::string_view rest = uri.substr(kScheme.size());
  std::string_view bucket = rest.substr(0, rest.find('/'));
  if (bucket.empty()) return false;
  auto alnum = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c));
  };
  if (!alnum(bucket.front()) || !alnum(bucket.back())) return false;
  for (char c : bucket) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool HasDisplayControl(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const auto next = [&](size_t k) {
      return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0;
    };
    if (c < 0x20 || c == 0x7f) return true;
    if (c == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f) return true;  // C1: U+0080-U+009F.
    if (c == 0xd8 && next(1) == 0x9c) return true;                     // U+061C.
    if (c == 0xe2 && next(1) == 0x80) {
      const unsigned char low = next(2);
      if (low == 0x8e || low == 0x8f || (low >= 0xaa && low <= 0xae)) return true;
    }
    if (c == 0xe2 && next(1) == 0x81 && next(2) >= 0xa6 && next(2) <= 0xa9) return true;
  }
  return false;
}

Status CheckGcsUri(std::string_view uri, const std::string& path, bool object) {
  const std::string shape = object ? "gs://BUCKET/OBJECT" : "gs://BUCKET/...";
  if (!IsGcsUri(uri)) return FieldError(path, "must be a " + shape + " URI");
  std::string_view rest = uri.substr(5);
  const size_t slash = rest.find('/');
  std::string_view name = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (object && (name.empty() || name.back() == '/')) {
    return FieldError(path, "must be a " + shape + " URI naming an object (not a directory)");
  }
  if (!name.empty() && name.back() == '/') name.remove_suffix(1);  // A prefix's own '/'.
  if (slash != std::string_view::npos && !object && name.empty() && rest.size() > slash + 1) {
    return FieldError(path, "must not have an empty path segment ('//')");
  }
  for (size_t start = 0; !name.empty();) {
    const size_t end = name.find('/', start);
    std::string_view seg = name.substr(start, end == std::string_view::npos ? end : end - start);
    if (seg.empty()) return FieldError(path, "must not have an empty path segment ('//')");
    if (seg == "." || seg == "..") {
      return FieldError(path, "must not have a '.' or '..' path segment");
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return Status::Ok();
}

bool IsCIdentifier(std::string_view s) {
  if (s.empty()) return false;
  if (!std::isalpha(static_cast<unsigned char>(s[0])) && s[0] != '_') return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

namespace {

// Label characters: lowercase ASCII letters, digits, '_', '-', and any non-ASCII byte
// (international characters; their UTF-8 bytes are all >= 0x80).
bool IsLabelChar(unsigned char c) {
  return c >= 0x80 || std::islower(c) || std::isdigit(c) || c == '_' || c == '-';
}

}  // namespace

Status ValidateLabels(const std::string& path, const std::map<std::string, std::string>& labels) {
  constexpr size_t kMaxChars = 64;
  for (const auto& [key, value] : labels) {
    const std::string quoted = "\"" + key + "\"";
    if (key.empty()) return FieldError(path, "label keys must not be empty");
    if (Utf8Length(key) > kMaxChars) {
      return FieldError(path, "label key " + quoted + " is longer than 64 characters");
    }
    unsigned char first = static_cast<unsigned char>(key[0]);
    if (!(first >= 0x80 || std::islower(first))) {
      return FieldError(path,
                        "label key " + quoted +
                            " must start with a lowercase letter or an international character");
    }
    for (unsigned char c : key) {
      if (!IsLabelChar(c)) {
        return FieldError(path, "label key " + quoted +
                                    " may contain only lowercase letters, digits, '_' and '-'");
      }
    }
    const std::string value_path = JoinPath(path, key);
    if (Utf8Length(value) > kMaxChars) {
      return FieldError(value_path, "label value is longer than 64 characters");
    }
    for (unsigned char c : value) {
      if (!IsLabelChar(c)) {
        return FieldError(value_path,
                          "label values may contain only lowercase letters, digits, '_' and '-'");
      }
    }
  }
  return Status::Ok();
}

bool ReadInteger(const nlohmann::json& v, int64_t* out) {
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    *out = v.get<int64_t>();
    return true;
  }
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (v.is_number_float()) {
    // proto3 parsers accept an integral float ("2.0", or 2e3) for integer fields.
    double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.2e18) return false;
    *out = static_cast<int64_t>(d);
    return true;
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty()) return false;
    int64_t value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size()) return false;
    if (s[0] == '+') return false;
    *out = value;
    return true;
  }
  return false;
}

Result<WireObject> WireObject::Open(const nlohmann::json& value, std::string path,
                                    std::initializer_list<std::string_view> known,
                                    std::initializer_list<std::string_view> output_only) {
  if (!value.is_object()) return FieldError(path, "must be an object");
  WireObject obj(std::move(path));
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    auto matches = [&key](std::string_view name) { return key == name || key == SnakeCase(name); };
    std::string_view field;
    for (std::string_view name : known) {
      if (matches(name)) field = name;
    }
    if (field.empty()) {
      bool ignored = false;
      for (std::string_view name : output_only) {
        if (matches(name)) ignored = true;
      }
      if (ignored) continue;  // Output-only: accepted and dropped, as Google does.
      return FieldError(obj.PathOf(key), "unknown field: Unknown name \"" + key + "\"");
    }
    if (obj.fields_.count(field) != 0) {
      return FieldError(obj.PathOf(field), "field given twice (as lowerCamelCase and snake_case)");
    }
    obj.fields_.emplace(std::string(field), &it.value());
  }
  return obj;
}

const nlohmann::json* WireObject::Find(std::string_view field) const {
  auto it = fields_.find(field);
  if (it == fields_.end() || it->second->is_null()) return nullptr;
  return it->second;
}

void WireObject::SetCanonical(std::string_view field, nlohmann::json value) {
  canonical_[std::string(field)] = std::move(value);
}

Status WireObject::String(std::string_view field, std::string* out) {
  const nlohmann::json* v = Find(field);
  if (v == nullptr) return Status::Ok();
  if (!v->is_string()) return FieldError(PathOf(field), "must be a string");
  *out = v->get<std::string>();
  SetCanonical(field, *out);
  return Status::Ok();
}

Status WireObject::Bool(std::string_view field, bool* out) {
  const nlohmann::json* v = Find(field);
  if (v == nullptr) return Status::Ok();
  if (!v->is_boolean()) return FieldError(PathOf(field), "must be a boolean");
  *out = v->get<bool>();
  SetCanonical(field, *out);
  return Status::Ok();
}

Status WireObject::Int64(std::string_view field, int64_t* out) {
  const nlohmann::json* v = Find(field);
  if (v == nullptr) return Status::Ok();
  int64_t value = 0;
  if (!ReadInteger(*v, &value)) return FieldError(PathOf(field), "must be an integer (int64)");
  *out = value;
  SetCanonical(field, std::to_string(value));  // proto3 JSON: int64 as a string.
  return Status::Ok();
}

Status WireObject::Int32(std::string_view field, int32_t* out) {
  const nlohmann::json* v = Find(field);
  if (v == nullptr) return Status::Ok();
  int64_t value = 0;
  if (!ReadInteger(*v, &value) || value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max()) {
    return FieldError(PathOf(field), "must be an integer (int32)");
  }
  *out = static_cast<int32_t>(value);
  SetCanonical(field, *out);  // proto3 JSON: int32 as a number.
  return Status::Ok();
}

Status WireObject::Enum(std::string_view field, EnumTable table, std::string* out) {
  const nlohmann::json* v = Find(field);
  if (v == nullptr) return Status::Ok();
  std::string_view name;
  if (v->is_string() && EnumNumber(table, v->get_ref<const std::string&>()) >= 0) {
    name = EnumName(table, EnumNumber(table, v->get_ref<const std::string&>()));
  } else {
    int64_t number = 0;
    if (ReadInteger(*v, &number) && number >= 0 && number <= std::numeric_limits<int>::max()) {
      name = EnumName(table, static_cast<int>(number));
    }
  }
  if (name.empty()) {
    std::string shown = v->is_string() ? v->get<std::string>() : v->dump();
    return FieldError(PathOf(field), "invalid value \"" + shown + "\"");
  }
  *out = std::string(name);
  SetCanonical(field, *out);
  return Status::Ok();
}

Status WireObject::Duration(std::string_view field, DurationMicros* out) {
  const nlohmann::json* v = Find(field);
  if (v == nullptr) return Status::Ok();
  if (!v->is_string())
    return FieldError(PathOf(field), "must be a duration string such as \"3600s\"");
  Result<DurationMicros> d = ParseDuration(v->get_ref<const std::string&>());
  if (!d.ok()) return FieldError(PathOf(field), d.status().message());
  *out = *d;
  SetCanonical(field, v->get<std::string>());
  return Status::Ok();
}

Status WireObject::StringList(std::string_view field, std::vector<std::string>* out,
                              size_t max_items) {
  const nlohmann::json* v = Find(field);
  if (v == nullptr) return Status::Ok();
  if (!v->is_array()) return FieldError(PathOf(field), "must be an array of strings");
  if (v->size() > max_items) {
    return FieldError(PathOf(field), "must have at most " + std::to_string(max_items) + " entries");
  }
  std::vector<std::string> items;
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& item = (*v)[i];
    if (!item.is_string()) return FieldError(IndexPath(PathOf(field), i), "must be a string");
    items.push_back(item.get<std::string>());
  }
  *out = items;
  SetCanonical(field, std::move(items));
  return Status::Ok();
}

Status WireObject::StringMap(std::string_view field, std::map<std::string, std::string>* out,
                             size_t max_items) {
  const nlohmann::json* v = Find(field);
  if (v == nullptr) return Status::Ok();
  if (!v->is_object()) return FieldError(PathOf(field), "must be an object (map of strings)");
  if (v->size() > max_items) {
    return FieldError(PathOf(field), "must have at most " + std::to_string(max_items) + " entries");
  }
  std::map<std::string, std::string> items;
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it.value().is_string())
      return FieldError(JoinPath(PathOf(field), it.key()), "must be a string");
    items[it.key()] = it.value().get<std::string>();
  }
  *out = items;
  SetCanonical(field, nlohmann::json(items));
  return Status::Ok();
}

Status WireObject::OpaqueObject(std::string_view field) {
  const nlohmann::json* v = Find(field);
  if (v == nullptr) return Status::Ok();
  if (!v->is_object()) return FieldError(PathOf(field), "must be an object");
  SetCanonical(field, *v);
  return Status::Ok();
}

}  // namespace ty::wire::internal
