// The replica listener (ApiServer::Options::allowed_peers): bound to every address
// so containers reach it through their network's gateway, it serves only loopback
// and the allowed networks; other peers are disconnected unanswered.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include "api/api_fixture.h"

namespace ty::api {
namespace {

// A non-loopback IPv4 address of this machine, "" when there is none.
std::string ExternalAddress() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof(buf));
    found = buf;
  }
  freeifaddrs(list);
  return found;
}

class ApiPeersTest : public ApiFixture {};

TEST_F(ApiPeersTest, OnlyLoopbackAndAllowedNetworksAreServed) {
  ApiServer::Options o;
  o.host = "0.0.0.0";
  o.port = 0;
  o.storage = objects_.get();
  o.random = SystemRandom::Get();
  o.allowed_peers = {"10.88.0.0/13"};
  auto server = ApiServer::Create(service_.get(), o);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto port = (*server)->Start();
  ASSERT_TRUE(port.ok());
  std::string saved = base_;
  base_ = "http://127.0.0.1:" + std::to_string(*port);
  EXPECT_EQ(Get("/storage/v1/b").status, 200);
  std::string external = ExternalAddress();
  if (!external.empty() && external.rfind("10.", 0) != 0) {
    base_ = "http://" + external + ":" + std::to_string(*port);
    Reply refused = Get("/storage/v1/b");
    EXPECT_EQ(refused.status, 0) << "served " << external << ": " << refused.body;
    EXPECT_FALSE(refused.curl_error.empty());
  }
  base_ = saved;
  (*server)->Stop();
}

TEST_F(ApiPeersTest, MalformedNetworksAreRefusedAtCreation) {
  ApiServer::Options o;
  o.allowed_peers = {"10.88.0.0/40"};
  EXPECT_EQ(ApiServer::Create(service_.get(), o).status().code(), StatusCode::kInvalidArgument);
  o.allowed_peers = {"not-an-address"};
  EXPECT_EQ(ApiServer::Create(service_.get(), o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ty::api
