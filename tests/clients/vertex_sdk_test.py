"""The Vertex AI Python SDK, unchanged, against trainyardd: what the guides do with it
(custom jobs, training pipelines, tuning jobs).

Its REST transport sends every enum as a number and asks for numbers back
($alt=json;enum-encoding=int). One process for every case: importing the SDK costs ~13 s.
Usage: vertex_sdk_test.py http://127.0.0.1:PORT  (PYTHONPATH = the SDK;
STORAGE_EMULATOR_HOST = the same URL, for staging uploads).
"""
import sys
import time
import traceback

import google.auth.credentials
from google.cloud import aiplatform, storage
from google.cloud.aiplatform import hyperparameter_tuning as hpt

URL = sys.argv[1]
PROJECT = "sdk-project"
BUCKET = "sdk-staging"
BUSYBOX = "localhost/trainyard/busybox:latest"
SKLEARN = "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest"
CREDENTIALS = google.auth.credentials.AnonymousCredentials()
FAILURES = []


def case(fn):
    start = time.time()
    try:
        fn()
        print(f"ok   {fn.__name__} ({time.time() - start:.1f} s)", flush=True)
    except Exception:  # noqa: BLE001 — every failure is reported, then the next case runs.
        FAILURES.append(fn.__name__)
        print(f"FAIL {fn.__name__}\n{traceback.format_exc()}", flush=True)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def pool(replicas, command, image=BUSYBOX):
    return {"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": replicas,
            "container_spec": {"image_uri": image, "command": ["sh", "-c", command]}}


def setup():
    aiplatform.init(project=PROJECT, location="us-central1", api_endpoint=URL,
                    api_transport="rest", credentials=CREDENTIALS,
                    staging_bucket=f"gs://{BUCKET}")
    client = storage.Client(project=PROJECT, credentials=CREDENTIALS,
                            client_options={"api_endpoint": URL})
    client.create_bucket(BUCKET)


def custom_job_multi_worker():
    # The distributed-training lab: a chief and two workers, each sees the cluster.
    job = aiplatform.CustomJob(display_name="multi-worker", worker_pool_specs=[
        pool(1, 'echo "chief $CLUSTER_SPEC"'), pool(2, 'echo "worker $CLUSTER_SPEC"')])
    job.run(sync=True)
    expect(job.state == aiplatform.gapic.JobState.JOB_STATE_SUCCEEDED, f"state {job.state}")
    expect(len(job.job_spec.worker_pool_specs) == 2, "two pools read back")


def from_local_script_on_a_prebuilt_image():
    import os
    import tempfile
    script = os.path.join(tempfile.mkdtemp(), "task.py")
    with open(script, "w") as f:
        f.write("import sys, sklearn\nprint('local script', sklearn.__version__, sys.argv[1:])\n")
    job = aiplatform.CustomJob.from_local_script(
        display_name="local-script", script_path=script, container_uri=SKLEARN,
        args=["--epochs", "2"], replica_count=1, machine_type="n1-standard-4")
    job.run(sync=True)
    expect(job.state == aiplatform.gapic.JobState.JOB_STATE_SUCCEEDED, f"state {job.state}")
    spec = job.job_spec.worker_pool_specs[0].python_package_spec
    expect(spec.executor_image_uri == SKLEARN, "the prebuilt name reads back")


def tuning_job_with_log_and_linear_scales():
    report = ('mkdir -p "$(dirname "$CLOUD_ML_HP_METRIC_FILE")"; '
              'echo "{\\"acc\\": 0.5, \\"global_step\\": 1, \\"trial\\": \\"$CLOUD_ML_TRIAL_ID\\"}" '
              '> "$CLOUD_ML_HP_METRIC_FILE"')
    trial = aiplatform.CustomJob(display_name="trial", worker_pool_specs=[pool(1, report)])
    job = aiplatform.HyperparameterTuningJob(
        display_name="hpt", custom_job=trial, metric_spec={"acc": "maximize"},
        parameter_spec={
            "lr": hpt.DoubleParameterSpec(min=1e-4, max=1e-1, scale="log"),
            "units": hpt.IntegerParameterSpec(min=4, max=64, scale="linear"),
            "opt": hpt.CategoricalParameterSpec(values=["sgd", "adam"]),
            "batch": hpt.DiscreteParameterSpec(values=[16, 32, 64], scale="linear")},
        max_trial_count=3, parallel_trial_count=2, search_algorithm="random")
    job.run(sync=True)
    expect(job.state == aiplatform.gapic.JobState.JOB_STATE_SUCCEEDED, f"state {job.state}")
    expect(len(job.trials) == 3, f"{len(job.trials)} trials")
    for t in job.trials:
        lr = [p.value for p in t.parameters if p.parameter_id == "lr"][0]
        expect(1e-4 <= lr <= 1e-1, f"lr {lr} in range")
    spec = job.to_dict()["studySpec"]
    scales = {p["parameterId"]: p.get("scaleType") for p in spec["parameters"]}
    expect(scales["lr"] == "UNIT_LOG_SCALE", f"scales {scales}")
    expect(spec["algorithm"] == "RANDOM_SEARCH", f"algorithm {spec['algorithm']}")


def custom_container_training_job():
    # A TrainingPipeline whose backing CustomJob runs the container.
    job = aiplatform.CustomContainerTrainingJob(
        display_name="container-pipeline", container_uri=BUSYBOX,
        command=["sh", "-c", 'echo "model dir $AIP_MODEL_DIR"'])
    model = job.run(replica_count=1, machine_type="n1-standard-4")
    expect(model is None, "no Model registry: run returns None")
    expect(job.state == aiplatform.gapic.PipelineState.PIPELINE_STATE_SUCCEEDED, f"state {job.state}")
    backing = job.to_dict()["trainingTaskMetadata"]["backingCustomJob"]
    custom = aiplatform.CustomJob.get(backing)
    expect(custom.state == aiplatform.gapic.JobState.JOB_STATE_SUCCEEDED, f"backing {custom.state}")
    pools = custom.job_spec.worker_pool_specs
    expect(pools[0].container_spec.image_uri == BUSYBOX, "the backing job runs the container")
    names = [p.resource_name for p in aiplatform.CustomContainerTrainingJob.list()]
    expect(job.resource_name in names, f"listed: {names}")


def custom_python_package_training_job():
    import io
    import tarfile
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as t:
        for name, text in {"pkg-0.1/setup.py": "from setuptools import setup\n"
                           "setup(name='pkg', version='0.1', packages=['pkg'])\n",
                           "pkg-0.1/pkg/__init__.py": "",
                           "pkg-0.1/pkg/task.py": "import sys\nprint('package pipeline', sys.argv[1:])\n"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            t.addfile(info, io.BytesIO(text.encode()))
    client = storage.Client(project=PROJECT, credentials=CREDENTIALS,
                            client_options={"api_endpoint": URL})
    client.bucket(BUCKET).blob("pkgs/pkg-0.1.tar.gz").upload_from_string(data.getvalue())
    job = aiplatform.CustomPythonPackageTrainingJob(
        display_name="package-pipeline", python_package_gcs_uri=f"gs://{BUCKET}/pkgs/pkg-0.1.tar.gz",
        python_module_name="pkg.task", container_uri=SKLEARN)
    job.run(replica_count=1, machine_type="n1-standard-4", args=["--lr", "0.1"])
    expect(job.state == aiplatform.gapic.PipelineState.PIPELINE_STATE_SUCCEEDED, f"state {job.state}")


def jobs_on_a_user_image_from_a_google_base():
    # Issue 33: the custom-containers guide's Dockerfile (its requirements ones this
    # machine has without a package index), FROM a Deep Learning Containers name, then
    # the SDK's two ways to run a script on such an image: CustomTrainingJob (a package
    # installed into the image) and from_local_script (its command runs `pip install
    # --upgrade pip` and `pip3 install --user` in the replica, no index reachable).
    import os
    import subprocess
    import tempfile
    context = tempfile.mkdtemp()
    os.makedirs(os.path.join(context, "trainer"))
    with open(os.path.join(context, "trainer", "task.py"), "w") as f:
        f.write("print('image trainer')\n")
    with open(os.path.join(context, "Dockerfile"), "w") as f:
        f.write("FROM gcr.io/deeplearning-platform-release/sklearn-cpu\n"
                "WORKDIR /root\n"
                "# Installs additional packages\n"
                "RUN pip install scikit-learn numpy && pip install --user joblib"
                " && python -m pip install scipy\n"
                "COPY trainer/ trainer/\n"
                'ENTRYPOINT ["python", "-m", "trainer.task"]\n')
    image = f"localhost/sdk-user/trainer:{int(time.time() * 1000)}"
    built = subprocess.run(["podman", "build", "-q", "-t", image, context],
                           capture_output=True, text=True, timeout=300)
    expect(built.returncode == 0, f"podman build: {built.stdout}{built.stderr}")
    try:
        script = os.path.join(context, "script.py")
        with open(script, "w") as f:
            f.write("import sklearn\nprint('script on a user image', sklearn.__version__)\n")
        training = aiplatform.CustomTrainingJob(
            display_name="user-image-script", script_path=script, container_uri=image,
            requirements=["scikit-learn"])
        training.run(replica_count=1, machine_type="n1-standard-4")
        expect(training.state == aiplatform.gapic.PipelineState.PIPELINE_STATE_SUCCEEDED,
               f"CustomTrainingJob: {training.state}")
        job = aiplatform.CustomJob.from_local_script(
            display_name="user-image-local-script", script_path=script, container_uri=image,
            replica_count=1, machine_type="n1-standard-4")
        job.run(sync=True)
        expect(job.state == aiplatform.gapic.JobState.JOB_STATE_SUCCEEDED,
               f"from_local_script: {job.state}")
        command = job.job_spec.worker_pool_specs[0].container_spec.command
        expect("pip3 install -q --user" in " ".join(command), f"the SDK's own command: {command}")
    finally:
        subprocess.run(["podman", "rmi", "-f", image], capture_output=True, timeout=60)


def get_list_and_cancel():
    job = aiplatform.CustomJob(display_name="to-cancel",
                               worker_pool_specs=[pool(1, "sleep 1000")])
    job.run(sync=False)
    job.wait_for_resource_creation()
    again = aiplatform.CustomJob.get(job.resource_name)
    expect(again.display_name == "to-cancel", "get")
    names = [j.resource_name for j in aiplatform.CustomJob.list()]
    expect(job.resource_name in names, "list")
    job.cancel()
    deadline = time.time() + 60
    while time.time() < deadline:
        state = aiplatform.CustomJob.get(job.resource_name).state
        if state == aiplatform.gapic.JobState.JOB_STATE_CANCELLED:
            return
        time.sleep(0.5)
    raise AssertionError(f"still {state} a minute after cancel")


def storage_client_with_a_replica_credential():
    # A Slurm replica's STORAGE_EMULATOR_HOST is http://replica:TOKEN@HOST:PORT
    # (auth/replica_credentials.h). google-cloud-storage, unchanged, must carry the
    # userinfo on every call: JSON API, a download by mediaLink, a resumable upload
    # by its Location. The token is made here as the daemon makes it, from the
    # daemon's secret, for a running job; the replica listener takes it from loopback.
    import hashlib
    import hmac
    import os
    data_dir = os.environ["TY_DATA_DIR"]
    secret = open(os.path.join(data_dir, "replica-secret"), "rb").read()
    port = open(os.path.join(data_dir, "replica-port")).read().strip()
    job = aiplatform.CustomJob(display_name="credential-holder",
                               worker_pool_specs=[pool(1, "sleep 1000")])
    job.run(sync=False)
    job.wait_for_resource_creation()
    uid = job.resource_name.rsplit("/", 1)[1]
    token = uid + "." + hmac.new(secret, uid.encode(), hashlib.sha256).hexdigest()[:32]

    def client(userinfo):
        saved = os.environ["STORAGE_EMULATOR_HOST"]
        os.environ["STORAGE_EMULATOR_HOST"] = f"http://{userinfo}127.0.0.1:{port}"
        try:
            return storage.Client(project=PROJECT, credentials=CREDENTIALS)
        finally:
            os.environ["STORAGE_EMULATOR_HOST"] = saved

    replica = client(f"replica:{token}@")
    bucket = replica.bucket(BUCKET)
    bucket.blob("replica/small.txt").upload_from_string(b"small")
    big = bucket.blob("replica/big.bin", chunk_size=256 * 1024)  # Resumable, by Location.
    big.upload_from_string(os.urandom(600 * 1024))
    names = [b.name for b in replica.list_blobs(BUCKET, prefix="replica/")]
    expect(names == ["replica/big.bin", "replica/small.txt"], f"listed {names}")
    got = bucket.get_blob("replica/small.txt")  # Its mediaLink carries the userinfo.
    expect(got.download_as_bytes() == b"small", "download by mediaLink")
    expect(len(bucket.blob("replica/big.bin").download_as_bytes()) == 600 * 1024, "big")
    for who, userinfo in (("no credential", ""), ("a forged one", f"replica:{uid}.{'0' * 32}@")):
        try:
            client(userinfo).bucket(BUCKET).blob("replica/small.txt").download_as_bytes()
            raise AssertionError(f"{who} was served")
        except Exception as e:  # noqa: BLE001
            expect("403" in str(e), f"{who}: {e}")
    job.cancel()
    deadline = time.time() + 60
    while aiplatform.CustomJob.get(job.resource_name).state != \
            aiplatform.gapic.JobState.JOB_STATE_CANCELLED and time.time() < deadline:
        time.sleep(0.5)
    try:  # A finished job's credential is no one's.
        replica.bucket(BUCKET).blob("replica/small.txt").download_as_bytes()
        raise AssertionError("a cancelled job's credential was served")
    except Exception as e:  # noqa: BLE001
        expect("403" in str(e), f"after cancel: {e}")


def trainer_writing_event_files():
    """tests/tensorboard/event_writer.py with its messages: protoc's descriptor set of
    proto/tensorboard, base64, as a script of its own."""
    import base64
    import os
    import subprocess
    import tempfile
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    work = tempfile.mkdtemp()
    desc = os.path.join(work, "event.desc")
    subprocess.run(["protoc", "--descriptor_set_out=" + desc, "-I", root + "/proto",
                    root + "/proto/tensorboard/event.proto"], check=True)
    with open(desc, "rb") as f:
        prefix = 'DESCRIPTOR_SET = "%s"\n' % base64.b64encode(f.read()).decode()
    script = os.path.join(work, "task.py")
    with open(root + "/tests/tensorboard/event_writer.py") as src, open(script, "w") as out:
        out.write(prefix + src.read())
    return script


def tensorboard_and_a_jobs_curves():
    # The TensorBoard guide: an instance, a job pointed at it, its curves read back.
    board = aiplatform.Tensorboard.create(display_name="sdk-board", description="curves")
    expect(board.display_name == "sdk-board", f"created {board.display_name}")
    listed = [t.resource_name for t in aiplatform.Tensorboard.list()]
    expect(board.resource_name in listed, f"listed {listed}")
    job = aiplatform.CustomJob.from_local_script(
        display_name="curves", script_path=trainer_writing_event_files(), container_uri=SKLEARN,
        replica_count=1, machine_type="n1-standard-4", environment_variables={"STEPS": "10"},
        base_output_dir=f"gs://{BUCKET}/curves")
    job.run(tensorboard=board.resource_name,
            service_account=f"trainer@{PROJECT}.iam.gserviceaccount.com", sync=True)
    expect(job.state == aiplatform.gapic.JobState.JOB_STATE_SUCCEEDED, f"state {job.state}")
    expect(job.job_spec.tensorboard == board.resource_name, "the spec names the tensorboard")
    runs = {r.name for r in aiplatform.TensorboardRun.list(
        tensorboard_experiment_name=f"{board.resource_name}/experiments/{job.name}")}
    expect(runs == {"default", "validation"}, f"runs {runs}")
    data = aiplatform.TensorboardRun(
        "default", tensorboard_id=board.name, tensorboard_experiment_id=job.name
    ).read_time_series_data()
    values = [v.scalar.value for v in data["loss"].values]
    expect(len(values) == 10, f"loss points {values}")
    expect(abs(values[3] - 0.25) < 1e-6, f"loss at step 3 {values[3]}")
    board.update(display_name="renamed")
    expect(aiplatform.Tensorboard(board.resource_name).display_name == "renamed", "updated")
    board.delete()
    expect(board.resource_name not in [t.resource_name for t in aiplatform.Tensorboard.list()],
           "deleted")


if __name__ == "__main__":
    setup()
    for c in (custom_job_multi_worker, from_local_script_on_a_prebuilt_image,
              tuning_job_with_log_and_linear_scales, custom_container_training_job,
              custom_python_package_training_job, jobs_on_a_user_image_from_a_google_base,
              get_list_and_cancel, tensorboard_and_a_jobs_curves,
              storage_client_with_a_replica_credential):
        case(c)
    print("vertex_sdk:", "FAILED " + ", ".join(FAILURES) if FAILURES else "all cases passed")
    sys.exit(1 if FAILURES else 0)
