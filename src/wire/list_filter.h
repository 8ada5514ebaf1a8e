// List filters of both dialects, evaluated against model::Job.
//
// Vertex (AIP-160, snake_case names): `display_name`, `state`, `create_time`,
// `labels.KEY`; ml v1: `jobId`, `state`, `createTime`, `labels.KEY` (camelCase;
// snake_case accepted too). Operators `=`, `!=`, `:` (has / wildcard `*`, and
// `labels.k:*` existence), `<`, `<=`, `>`, `>=` (times compare as instants),
// combinators `AND`, `OR`, `NOT`, `-` prefix, parentheses, implicit AND by
// adjacency. Values may be quoted ("..." or '...') or bare.
//
// Pure: no I/O; a parsed filter is immutable and thread-safe.
#pragma once

#include <memory>
#include <string_view>

#include "common/status.h"
#include "filter/filter_syntax.h"
#include "model/job.h"

namespace ty::wire {

// The domain types the wire forms stand for.
using model::Dialect;
using model::Job;

class ListFilter {
 public:
  // Empty text matches everything. InvalidArgument naming the offending token.
  static Result<ListFilter> Parse(Dialect dialect, std::string_view text);

  bool Matches(const Job& job) const;

  struct Node;  // Expression tree; defined in list_filter.cc.

 private:
  explicit ListFilter(std::shared_ptr<const Node> root, Dialect dialect)
      : root_(std::move(root)), dialect_(dialect) {}
  std::shared_ptr<const Node> root_;  // Null = match all.
  Dialect dialect_;
};

// The list filters' table for the one filter engine (filter/filter_syntax.h).
const filter::FilterGrammar& ListFilterGrammar();

}  // namespace ty::wire
