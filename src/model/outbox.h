// A job's or a study's service lines, committed with the record that decided them.
//
// A machine's decision may say things ("Trial 3 started", "Job failed: ..."). The
// controller writes the record with those lines in it, in one commit, and only then
// writes the lines to the job's log. A daemon that dies between the two finds the
// lines in the stored record: at start-up it writes those its log does not hold yet.
// Each line carries a sequence number of its own job (`seq`), which the log entry
// keeps (logs::LogEntry::source_time of a "service" entry), so what was written is
// known by number, never by matching text. The record keeps only its last commit's
// lines: every earlier commit's lines were written before the next decision was made.
// A finished study carries none (its machine commits the last lines before the end). A
// finished job carries its last lines until they are written, then is committed without
// them; start-up reads the live records and the finished ones that still carry lines
// (jobstore::JobStore::ListLiveJobs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace ty::model {

struct OutboxLine {
  int64_t seq = 0;  // 1, 2, ... within the job: one more than the line before.
  std::string severity = "INFO";
  std::string message;
  bool operator==(const OutboxLine& o) const {
    return seq == o.seq && severity == o.severity && message == o.message;
  }
};

struct ServiceOutbox {
  int64_t last_seq = 0;           // The newest line's number, written or not.
  std::vector<OutboxLine> lines;  // The last commit's lines, oldest first.
  void Add(std::string message, std::string severity = "INFO") {
    lines.push_back(OutboxLine{++last_seq, std::move(severity), std::move(message)});
  }
  bool operator==(const ServiceOutbox& o) const {
    return last_seq == o.last_seq && lines == o.lines;
  }
};

// As stored (a JSON object) and back; "" or "{}" read as an empty outbox.
std::string EncodeOutbox(const ServiceOutbox& outbox);
Result<ServiceOutbox> DecodeOutbox(const std::string& text);

}  // namespace ty::model
