// NetworkSlots: network namespaces kept between single-replica attempts, so that a
// replica that talks to no peer joins one already set up instead of the engine
// setting up (and later tearing down) a network namespace for each container (the
// ContainerExecutor option `network_slots`; podman only).
//
// Why: on podman 4.3 a container's network setup is netavark plus a burst of
// iptables processes, taken under a lock all containers share; on a 2-core machine
// it was ~15% of a trivial container's CPU and capped parallel starts (raw API, 16
// clients: 7.6 containers/s on the default network, 8.4 joining another
// container's namespace).
//
// A slot is a holder container on the engine's default network: ty-sandbox-init
// --hold (which only waits) as the sole file of a root directory of this daemon
// (podman's `rootfs`, so no image is pinned), labelled kLabelNetSlotHolder and
// kLabelInstance. A replica joins it with NetworkMode "container:<holder>" and
// carries the holder's name as its kLabelNetSlot label. One replica uses a slot at
// a time, so ports never collide; when the replica is removed the slot serves the
// next one. What the replica sees: the holder's address and /etc/resolv.conf, and
// an /etc/hosts that podman fills with the replica's host name at 127.0.0.1 (the
// same namespace) and clears again when the replica goes.
//
// The engine refuses to remove a holder while a replica joined to it exists, so a
// holder is never taken from under a running replica, whatever this class
// believes: removing every holder it knows (the destructor) leaves those in use.
// A daemon restart finds the holders by label (Recover): one a replica names
// stays taken, the others running become idle, and any not running (a daemon
// killed between creating and starting it) is removed.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/random.h"
#include "common/status.h"
#include "executor/container/engine_client.h"

namespace ty::executor {

inline constexpr char kLabelNetSlotHolder[] = "trainyard.netslot.holder";  // On holders.
inline constexpr char kLabelNetSlot[] = "trainyard.netslot";  // On replicas: their holder.

struct NetworkSlotsOptions {
  int max_idle = 0;          // Idle holders kept for later replicas; 0 = no slots.
  std::string root_dir;      // Host directory made into the holders' root.
  std::string init_path;     // The ty-sandbox-init binary, copied into `root_dir`.
  std::string instance;      // kLabelInstance value; "" = none.
  Random* random = nullptr;  // Holders' names; required (the executor's).
};

class NetworkSlots {
 public:
  NetworkSlots(EngineClient* engine, NetworkSlotsOptions options);
  // Removes every holder it made or found that no replica uses.
  ~NetworkSlots();
  NetworkSlots(const NetworkSlots&) = delete;
  NetworkSlots& operator=(const NetworkSlots&) = delete;

  bool enabled() const { return options_.max_idle > 0; }

  // The name of a started holder no replica uses, now the caller's: an idle one,
  // or one made now.
  Result<std::string> Acquire();
  // The replica that joined `holder` is gone: the slot is idle again (removed when
  // `max_idle` are idle already).
  void Release(const std::string& holder);
  // A replica could not join `holder`: it is removed, never handed out again.
  void Discard(const std::string& holder);
  // Whether the engine has `holder` running (false when it cannot tell).
  bool Running(const std::string& holder);
  // Daemon start: this instance's holders named in `in_use` (kLabelNetSlot of the
  // replicas found) are taken, the others idle if running (up to `max_idle`) or
  // removed.
  void Recover(const std::set<std::string>& in_use);

 private:
  ty::Random& Randomness() const { return *options_.random; }
  Status PrepareRoot();
  Result<std::string> MakeHolder();
  void Remove(const std::vector<std::string>& holders);

  EngineClient* const engine_;
  const NetworkSlotsOptions options_;
  std::mutex mu_;
  bool root_ready_ = false;        // Guarded by mu_.
  std::vector<std::string> idle_;  // Guarded by mu_; most recently released last.
  std::set<std::string> taken_;    // Guarded by mu_.
};

}  // namespace ty::executor
