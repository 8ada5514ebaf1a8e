// Which job's replica connects from an address: the replica listener's way to tell
// one job's requests from another's, since the Cloud Storage clients send no
// credentials to an emulator host (api/access.h). The address is the replica's IPv4
// on its engine network as the daemon sees it (replicas reach the daemon through
// their network's gateway, without NAT); replicas of one network slot or warm
// sandbox share the holder's address, one job at a time.
//
// Lazily filled: a lookup of an address not known lists the running replicas (one
// engine call, ReplicaAddressBook's `list`), one lookup at a time, and remembers all
// of them; an address no running replica has is remembered as nobody's for a second,
// so a stranger's requests cannot make the daemon list the engine in a loop. A
// replica's job is forgotten when one of its replicas exits (Forget, called by the
// watcher before the exit is reported; its other replicas are listed again at their
// next request), so an address handed on to another job's replica (a network
// slot reused, the engine's IPAM) never speaks for the job that had it. An address
// two jobs claim at once speaks for neither.
//
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace ty::executor {

class ReplicaAddressBook {
 public:
  struct Entry {
    std::string address;  // "10.88.0.7"
    std::string job_uid;
  };
  using Listing = std::function<Result<std::vector<Entry>>()>;

  // `list`: every running replica's addresses; `clock` for the negative entries.
  ReplicaAddressBook(Listing list, const Clock* clock) : list_(std::move(list)), clock_(clock) {}

  std::optional<std::string> JobAt(const std::string& address);
  void Forget(const std::string& job_uid);

 private:
  struct Known {
    std::string job_uid;  // "" = ambiguous (two jobs).
  };
  const Listing list_;
  const Clock* const clock_;
  std::mutex mu_;
  std::map<std::string, Known> known_;           // By address. Guarded by mu_.
  std::map<std::string, TimeMicros> strangers_;  // Address -> until when. Guarded by mu_.
};

}  // namespace ty::executor
