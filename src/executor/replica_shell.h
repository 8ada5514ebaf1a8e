// ReplicaShell: an interactive shell on a terminal inside one running replica, as
// Vertex's `enableWebAccess` offers (api/shell_bridge.h carries it to a browser).
//
// The shell runs where the replica runs, with the replica's own user, namespaces and
// limits (an engine exec never adds privileges); it is a way into the job, never out
// of it. Destroying the object kills the shell (and so the foreground of its
// terminal), so a closed browser tab leaves nothing running behind.
//
// Thread-safety: fd() may be read and written from one thread while Resize runs on
// another; destruction must not race either.
#pragma once

#include <string>

#include "common/status.h"

namespace ty::executor {

class ReplicaShell {
 public:
  virtual ~ReplicaShell() = default;
  // A connected stream: what is written is typed into the terminal, what is read is
  // what the terminal shows (raw bytes: escape sequences and all). Owned by this object;
  // end of stream means the shell ended (it exited, or the replica did).
  virtual int fd() const = 0;
  // What the terminal showed before fd() was handed over (the first prompt).
  virtual std::string TakeEarlyOutput() = 0;
  // The terminal's size in characters.
  virtual Status Resize(int rows, int cols) = 0;
};

// Bounds a terminal size must keep; larger is refused, not clamped.
inline constexpr int kMaxTerminalRows = 500;
inline constexpr int kMaxTerminalCols = 1000;

}  // namespace ty::executor
