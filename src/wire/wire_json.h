// Internal helpers shared by the two wire dialects (vertex_dialect.cc, ml_dialect.cc):
// reading one proto3-JSON object field by field while validating types and building
// its canonical form.
//
// Why a reader class instead of ad-hoc `json.at()` calls: every rule of proto3 JSON
// input (snake_case or lowerCamelCase keys, int64 as string or number, enums as names
// or numbers, `null` meaning "unset", unknown keys rejected) must hold for every
// message of both dialects, with the same wire paths in errors. `WireObject` does it
// once. Nothing here throws: nlohmann accessors are only used after a type check.
//
// Not part of the module's public contract (dialect.h is). Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "model/enum_table.h"

namespace ty::wire::internal {

// "a" + "b" -> "a.b"; "" + "b" -> "b".
std::string JoinPath(const std::string& parent, std::string_view child);
// "a" + 3 -> "a[3]".
std::string IndexPath(const std::string& parent, size_t index);

// Number of Unicode code points in UTF-8 text (invalid bytes count as one each).
size_t Utf8Length(std::string_view s);
// True when UTF-8 `s` holds a character that changes how text around it is shown:
// C0 and C1 controls, DEL, and the bidirectional controls (U+061C, U+200E, U+200F,
// U+202A-U+202E, U+2066-U+2069), with which a name can read backwards in a table.
bool HasDisplayControl(std::string_view s);

// Proto enums (model/enum_table.h).
using model::internal::EnumName;
using model::internal::EnumNumber;
using model::internal::EnumTable;
using model::internal::EnumValue;

// proto3 field name spelling: "bootDiskSizeGb" -> "boot_disk_size_gb".
std::string SnakeCase(std::string_view camel);

// True for "gs://BUCKET" or "gs://BUCKET/..." where BUCKET is a plausible bucket name
// (lowercase letters, digits, '-', '_', '.', starting and ending alphanumeric).
bool IsGcsUri(std::string_view uri);
// A gs:// URI field a job names: IsGcsUri, and a path the bucket directory can hold
// (no "." or ".." segment, no empty segment but a prefix's trailing '/'). A package
// (`object` true) names an object: a non-empty path without a trailing '/'. OK, or
// FieldError(path, ...) saying which rule the URI breaks.
Status CheckGcsUri(std::string_view uri, const std::string& path, bool object);
// True for a C identifier: [A-Za-z_][A-Za-z0-9_]*.
bool IsCIdentifier(std::string_view s);

// Validates a `labels` map (shared by both dialects): keys and values at most 64
// characters; keys start with a lowercase letter or an international character;
// both use only lowercase letters, digits, '_', '-' and international (non-ASCII)
// characters. Errors: FieldError(`path`, ...) for a bad key, FieldError(`path.KEY`, ...)
// for a bad value.
Status ValidateLabels(const std::string& path, const std::map<std::string, std::string>& labels);

// A JSON object read field by field. `Open` checks the value is an object, maps each
// key (lowerCamelCase or its snake_case spelling) to a known field, rejects unknown
// and duplicate keys, and drops `output_only` fields. The typed readers then check
// each field's JSON type, convert it, and record its canonical form (lowerCamelCase
// key, int64 as a decimal string, enum as its name) in `canonical()`. A field that is
// absent or JSON `null` is "unset": readers leave their output untouched and record
// nothing.
class WireObject {
 public:
  // Errors (InvalidArgument via FieldError): `value` is not an object (at `path`);
  // an unknown key (at `path.key`, the key as sent); the same field twice under both
  // spellings. `known` and `output_only` are lowerCamelCase names.
  // REQUIRES: `value` outlives the returned object (it keeps pointers into it).
  static Result<WireObject> Open(const nlohmann::json& value, std::string path,
                                 std::initializer_list<std::string_view> known,
                                 std::initializer_list<std::string_view> output_only = {});

  const std::string& path() const { return path_; }
  // Wire path of a field: `path.field`.
  std::string PathOf(std::string_view field) const { return JoinPath(path_, field); }
  // The field's value; nullptr when absent or null.
  const nlohmann::json* Find(std::string_view field) const;
  bool Has(std::string_view field) const { return Find(field) != nullptr; }

  // Typed readers. Each returns FieldError(PathOf(field), "must be ...") on a wrong
  // type or value and otherwise sets `*out` only when the field is set.
  Status String(std::string_view field, std::string* out);
  Status Bool(std::string_view field, bool* out);
  // int64: a JSON integer or a string of decimal digits (optional '-').
  Status Int64(std::string_view field, int64_t* out);
  // int32: the same, range-checked.
  Status Int32(std::string_view field, int32_t* out);
  // Enum: a name from `table` or its number as a JSON integer or digit string, as
  // Google accepts both in every enum field. `*out` receives the name.
  Status Enum(std::string_view field, EnumTable table, std::string* out);
  // proto3 Duration: a string such as "3600s" (objects are not accepted).
  Status Duration(std::string_view field, DurationMicros* out);
  // At most `max_items` entries (model/spec_limits.h), checked before any is copied.
  Status StringList(std::string_view field, std::vector<std::string>* out, size_t max_items);
  Status StringMap(std::string_view field, std::map<std::string, std::string>* out,
                   size_t max_items);
  // A field kept as the client sent it (after checking it is an object); for rarely
  // used messages this server does not interpret.
  Status OpaqueObject(std::string_view field);

  // Records the canonical form of a nested message read by the caller.
  void SetCanonical(std::string_view field, nlohmann::json value);
  const nlohmann::json& canonical() const { return canonical_; }

 private:
  WireObject(std::string path) : path_(std::move(path)), canonical_(nlohmann::json::object()) {}

  std::string path_;
  std::map<std::string, const nlohmann::json*, std::less<>> fields_;  // camel name -> value
  nlohmann::json canonical_;
};

// Reads the integer in `v` (JSON integer, integral float, or decimal string).
// Returns false if `v` is not one.
bool ReadInteger(const nlohmann::json& v, int64_t* out);

}  // namespace ty::wire::internal
