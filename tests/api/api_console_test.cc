// The console's files as the daemon serves them (the pages themselves run in a real
// browser in tests/console/console_test.mjs).
#include "api/api_fixture.h"

namespace ty::api {
namespace {

class ApiConsoleTest : public ApiFixture {};

TEST_F(ApiConsoleTest, TheFilesComeWithAPolicyOfTheirOwnOriginOnly) {
  Reply index = Get("/console/");
  ASSERT_EQ(index.status, 200) << index.body;
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_NE(index.body.find("<script src=\"app.js\""), std::string::npos);
  const std::string policy = index.headers["content-security-policy"];
  EXPECT_NE(policy.find("default-src 'none'"), std::string::npos) << policy;
  EXPECT_NE(policy.find("script-src 'self'"), std::string::npos) << policy;
  EXPECT_EQ(policy.find("unsafe-inline"), std::string::npos) << policy;
  EXPECT_EQ(index.headers["x-content-type-options"], "nosniff");
  Reply script = Get("/console/app.js");
  ASSERT_EQ(script.status, 200);
  EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8");
  // The pages set what jobs wrote as text only.
  EXPECT_EQ(script.body.find("innerHTML"), std::string::npos);
  EXPECT_EQ(script.body.find("insertAdjacentHTML"), std::string::npos);
}

// The shell's page: xterm.js (vendored from npm at build, with its licence) writes its
// styles inline, so that page alone allows inline styles; scripts stay its own origin's.
TEST_F(ApiConsoleTest, TheShellPageAllowsInlineStylesButNoInlineScript) {
  Reply page = Get("/console/shell.html");
  ASSERT_EQ(page.status, 200) << page.body;
  const std::string policy = page.headers["content-security-policy"];
  EXPECT_NE(policy.find("style-src 'self' 'unsafe-inline'"), std::string::npos) << policy;
  EXPECT_NE(policy.find("script-src 'self';"), std::string::npos) << policy;
  Reply widget = Get("/console/xterm.js");
  ASSERT_EQ(widget.status, 200);
  EXPECT_GT(widget.body.size(), 400000u);  // All of it, past the 64 KiB literal pieces.
  EXPECT_NE(widget.body.find("Terminal"), std::string::npos);
  EXPECT_EQ(Get("/console/xterm.css").status, 200);
  Reply licence = Get("/console/xterm-LICENSE.txt");
  EXPECT_EQ(licence.content_type, "text/plain; charset=utf-8");
  EXPECT_NE(licence.body.find("Permission is hereby granted"), std::string::npos);
  // The shell itself opens over a WebSocket only.
  EXPECT_EQ(Get("/v1/projects/p/locations/l/customJobs/1:shell?replica=workerpool0-0").status, 400);
}

TEST_F(ApiConsoleTest, TheBarePathMovesToTheDirectoryAndUnknownFilesAre404) {
  Reply bare = Get("/console");
  EXPECT_EQ(bare.status, 301);
  EXPECT_EQ(bare.headers["location"], "/console/");
  EXPECT_EQ(Get("/console/missing.js").status, 404);
}

}  // namespace
}  // namespace ty::api
