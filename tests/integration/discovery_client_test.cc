// The AI Platform guide's Python client, as written there, against trainyardd:
// Debian's python3-googleapi (googleapiclient 1.7) builds the `ml` v1 service from the
// discovery document the daemon serves, then creates a job, waits for it, lists,
// refuses a duplicate and cancels — the calls of the guide's "Python client library"
// section, with only discoveryServiceUrl pointing at the daemon.
#include <gmock/gmock.h>

#include "integration/daemon_harness.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kPython[] = "/usr/bin/python3";  // Debian's, where python3-googleapi lives.

constexpr char kGuideClient[] = R"PY(
import sys, time
from googleapiclient import discovery, errors

base, image = sys.argv[1], sys.argv[2]
ml = discovery.build('ml', 'v1', cache_discovery=False,
                     discoveryServiceUrl=base + '/discovery/v1/apis/{api}/{apiVersion}/rest')
project_id = 'projects/p'

def spec(job_id, args):
    return {'jobId': job_id,
            'trainingInput': {'scaleTier': 'CUSTOM', 'masterType': 'n1-standard-4',
                              'masterConfig': {'imageUri': image}, 'args': args,
                              'region': 'us-central1'}}

created = ml.projects().jobs().create(body=spec('guide_job', ['echo', 'trained']),
                                      parent=project_id).execute()
print('created', created['jobId'])
name = project_id + '/jobs/guide_job'
for _ in range(240):
    job = ml.projects().jobs().get(name=name).execute()
    if job['state'] in ('SUCCEEDED', 'FAILED', 'CANCELLED'):
        break
    time.sleep(0.5)
print('ended', job['state'], 'endTime' in job)
listed = ml.projects().jobs().list(parent=project_id, filter='jobId:guide_*').execute()
print('listed', ','.join(j['jobId'] for j in listed.get('jobs', [])))
try:
    ml.projects().jobs().create(body=spec('guide_job', ['true']), parent=project_id).execute()
except errors.HttpError as e:
    print('duplicate', e.resp.status)
ml.projects().jobs().create(body=spec('guide_sleeper', ['sleep', '600']),
                            parent=project_id).execute()
print('cancel', ml.projects().jobs().cancel(name=project_id + '/jobs/guide_sleeper',
                                            body={}).execute())
)PY";

bool HaveDiscoveryClient() {
  return RunProcess({kPython, "-c", "import googleapiclient.discovery"}, {}, 60).rc == 0;
}

TEST(DiscoveryClientTest, TheGuidesPythonClientCreatesGetsListsAndCancels) {
  if (!HaveDiscoveryClient()) {
    GTEST_SKIP() << "python3-googleapi is not installed (scripts/setup installs it)";
  }
  if (!EngineAnswers() || !EngineHasImage(kTestImage)) {
    GTEST_SKIP() << "container engine down or " << kTestImage << " missing";
  }
  Daemon daemon;
  ProcessRun run = RunProcess({kPython, "-c", kGuideClient, daemon.base(), kTestImage}, {}, 240);
  ASSERT_EQ(run.rc, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("created guide_job\n"));
  EXPECT_THAT(run.out, HasSubstr("ended SUCCEEDED True\n"));
  EXPECT_THAT(run.out, HasSubstr("listed guide_job\n"));
  EXPECT_THAT(run.out, HasSubstr("duplicate 409\n"));
  EXPECT_THAT(run.out, HasSubstr("cancel {}\n"));
  nlohmann::json sleeper =
      daemon.WaitForField("/v1/projects/p/jobs/guide_sleeper", "state", {"CANCELLED"});
  EXPECT_EQ(sleeper.value("state", ""), "CANCELLED") << sleeper.dump();
}

}  // namespace
}  // namespace ty::testing
