// Tokens and roles (auth/tokens.h): the config's shape, hashing, and who may do what.
#include "auth/tokens.h"

#include <gtest/gtest.h>

namespace ty::auth {
namespace {

using nlohmann::json;

json Entry(const std::string& name, const std::string& token, const std::string& role,
           std::vector<std::string> projects) {
  return {{"name", name}, {"sha256", Sha256Hex(token)}, {"role", role}, {"projects", projects}};
}

TEST(TokensTest, Sha256IsTheStandardDigest) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokensTest, IdentifiesOnlyTheTokensItHolds) {
  auto table = TokenTable::FromConfig(json::array(
      {Entry("alice", "ty_alice", "editor", {"a"}), Entry("root", "ty_root", "admin", {"*"})}));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(table->size(), 2u);
  std::optional<Principal> alice = table->Identify("ty_alice");
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->name, "alice");
  EXPECT_EQ(alice->role, Role::kEditor);
  EXPECT_FALSE(table->Identify("ty_alic"));
  EXPECT_FALSE(table->Identify(""));
  // The hash is what the config holds; knowing it is not knowing the token.
  EXPECT_FALSE(table->Identify(Sha256Hex("ty_alice")));
}

TEST(TokensTest, MalformedEntriesNameTheEntryAndField) {
  auto error = [](json tokens) { return TokenTable::FromConfig(tokens).status().message(); };
  json good = Entry("a", "t", "viewer", {"p"});
  json clear = good;
  clear["sha256"] = "ty_the_token_itself";
  EXPECT_NE(error(json::array({clear})).find("tokens[0].sha256"), std::string::npos);
  json role = good;
  role["role"] = "owner";
  EXPECT_NE(error(json::array({good, role})).find("tokens[1].role"), std::string::npos);
  json none = good;
  none["projects"] = json::array();
  EXPECT_NE(error(json::array({none})).find("tokens[0].projects"), std::string::npos);
  json extra = good;
  extra["token"] = "x";
  EXPECT_NE(error(json::array({extra})).find("unknown key \"token\""), std::string::npos);
  EXPECT_NE(error(json::array({good, good})).find("same sha256"), std::string::npos);
  EXPECT_NE(error(json("x")).find("tokens must be a list"), std::string::npos);
  EXPECT_TRUE(TokenTable::FromConfig(json()).ok());
  EXPECT_TRUE(TokenTable::FromConfig(json())->empty());
}

TEST(TokensTest, RolesAreOrderedAndScopedToProjects) {
  Principal viewer{"v", Role::kViewer, {"a"}, {}, ""};
  Principal editor{"e", Role::kEditor, {"a", "b"}, {}, ""};
  Principal admin_a{"x", Role::kAdmin, {"a"}, {}, ""};
  Principal root{"r", Role::kAdmin, {"*"}, {}, ""};
  EXPECT_TRUE(CheckNeeds(viewer, {{"a", Role::kViewer, ""}}).ok());
  Status cancel = CheckNeeds(viewer, {{"a", Role::kEditor, ""}});
  EXPECT_EQ(cancel.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(cancel.message().find("\"v\" needs the editor role on project \"a\""),
            std::string::npos);
  EXPECT_TRUE(CheckNeeds(editor, {{"b", Role::kViewer, ""}, {"a", Role::kEditor, ""}}).ok());
  EXPECT_FALSE(CheckNeeds(editor, {{"a", Role::kViewer, ""}, {"c", Role::kViewer, ""}}).ok());
  // Daemon-wide things: only an admin of every project.
  EXPECT_FALSE(CheckNeeds(admin_a, {{"", Role::kAdmin, ""}}).ok());
  EXPECT_TRUE(CheckNeeds(root, {{"", Role::kAdmin, ""}, {"zz", Role::kEditor, ""}}).ok());
}

TEST(TokensTest, AReplicaHoldsItsJobsBucketsAndNothingElse) {
  Principal replica{"replica of job 7", Role::kNone, {}, {"a-out"}, ""};
  EXPECT_TRUE(CheckNeeds(replica, {{"a", Role::kEditor, "a-out"}}).ok());
  EXPECT_TRUE(CheckNeeds(replica, {{"", Role::kAdmin, "a-out"}}).ok());
  Status other = CheckNeeds(replica, {{"a", Role::kViewer, "a-secret"}});
  EXPECT_EQ(other.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(other.message().find("bucket \"a-secret\""), std::string::npos);
  EXPECT_FALSE(CheckNeeds(replica, {{"a", Role::kViewer, ""}}).ok());
}

TEST(TokensTest, BearerHeaders) {
  EXPECT_EQ(BearerToken("Bearer ty_abc"), "ty_abc");
  EXPECT_EQ(BearerToken("bearer  ty_abc \r\n"), "ty_abc");
  EXPECT_EQ(BearerToken("Basic dXNlcjpwYXNz"), "");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_EQ(BearerToken(""), "");
}

TEST(TokensTest, NewTokensAreLongRandomAndUrlSafe) {
  std::string a = NewToken(), b = NewToken();
  EXPECT_EQ(a.size(), 46u);
  EXPECT_EQ(a.rfind("ty_", 0), 0u);
  EXPECT_NE(a, b);
  EXPECT_EQ(
      a.find_first_not_of("ty_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-", 3),
      std::string::npos);
}

}  // namespace
}  // namespace ty::auth
