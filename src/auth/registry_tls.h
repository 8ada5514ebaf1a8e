// The registry's HTTPS: a certificate authority of this daemon's own, and a server
// certificate it signs for Google's registry names (gcr.io, *.gcr.io, *.pkg.dev) and
// the registry's address.
//
// Why: podman, the Docker CLI and containerd speak HTTPS to gcr.io and *.pkg.dev unless
// told a host is plain HTTP (registries.conf `insecure`), and a podman API service reads
// that setting once, at its start: one started before `trainyard config registry` failed
// every push with "connection refused" on port 443. Served over HTTPS on 443 with this
// authority installed where every client reads trust for a registry host at each
// connection (/etc/containers/certs.d/HOST/ca.crt, /etc/docker/certs.d/HOST/ca.crt),
// any client, already running or not, pushes and pulls by the Google names.
//
// The authority's key never leaves the daemon's data directory (mode 0600); only its
// certificate is handed out (GET /registry/ca.crt). It signs nothing but this server
// certificate, whose names are only the registry's.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace ty::auth {

struct RegistryTlsFiles {
  std::string ca_cert;   // Path of the authority's certificate (PEM).
  std::string cert;      // Path of the server certificate (PEM).
  std::string key;       // Path of the server key (PEM, 0600).
  std::string ca_pem;    // The authority's certificate itself.
  std::string replaced;  // Why an unusable authority was made anew ("" = it was not).
};

// The names the server certificate holds: Google's registry hosts.
const std::vector<std::string>& RegistryTlsNames();

// Keeps in `dir` (made 0700 if missing) an authority (10 years) and a server
// certificate for RegistryTlsNames() and `ip` (1 year), checked at each daemon start. Files that do
// not load, match or will expire within 30 days are made anew; the server certificate is also made
// anew when the authority or `ip` changed. Internal on I/O failure.
Result<RegistryTlsFiles> OpenRegistryTls(const std::string& dir, const std::string& ip);

}  // namespace ty::auth
