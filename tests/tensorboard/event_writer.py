"""A trainer that writes TensorBoard event files the way TensorBoard's writers do
(TFRecord framing, masked CRC-32C, Event protobufs), with Debian's python3-protobuf and
the messages of proto/tensorboard/event.proto. The tests put `DESCRIPTOR_SET = "<base64
of protoc --descriptor_set_out>"` before this text and run it in a replica.

Writes into $AIP_TENSORBOARD_LOG_DIR (gs://B/P/logs/, reached at /gcs/B/P/logs/):
  <logs>/events.out.tfevents.*             `loss` = 1/(step+1), as simple_value
                                          (torch.utils.tensorboard, tensorboardX)
  <logs>/validation/events.out.tfevents.*  `accuracy` = step/100, as a rank-0 float
                                          tensor of the scalars plugin (TF2)
for steps 0..STEPS-1 (env STEPS, default 20), SLEEP seconds apart (env SLEEP, default 0).
In a tuning job's trial ($CLOUD_ML_HP_METRIC_FILE set) it also reports the last accuracy
as cloudml-hypertune would.
"""
import json
import base64
import os
import socket
import struct
import sys
import time

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

POOL = descriptor_pool.DescriptorPool()
for proto in descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(DESCRIPTOR_SET)).file:  # noqa: F821
    POOL.Add(proto)


def message_class(name):
    descriptor = POOL.FindMessageTypeByName(name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(POOL).GetPrototype(descriptor)


Event = message_class("trainyard.tensorboard.Event")
CRC_TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    CRC_TABLE.append(c)


def masked_crc32c(data):
    c = 0xFFFFFFFF
    for byte in data:
        c = CRC_TABLE[(c ^ byte) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data +
            struct.pack("<I", masked_crc32c(data)))


class Writer:
    def __init__(self, directory):
        os.makedirs(directory, exist_ok=True)
        name = "events.out.tfevents.%d.%s" % (time.time(), socket.gethostname())
        self.file = open(os.path.join(directory, name), "ab")
        version = Event(wall_time=time.time(), file_version="brain.Event:2")
        self.write(version)

    def write(self, event):
        self.file.write(frame(event.SerializeToString()))
        self.file.flush()


def main():
    log_dir = os.environ["AIP_TENSORBOARD_LOG_DIR"]
    if log_dir.startswith("gs://"):
        log_dir = "/gcs/" + log_dir[len("gs://"):]
    steps = int(os.environ.get("STEPS", "20"))
    pause = float(os.environ.get("SLEEP", "0"))
    train, validation = Writer(log_dir), Writer(os.path.join(log_dir, "validation"))
    for step in range(steps):
        loss = Event(wall_time=time.time(), step=step)
        loss.summary.value.add(tag="loss", simple_value=1.0 / (step + 1))
        train.write(loss)
        accuracy = Event(wall_time=time.time(), step=step)
        value = accuracy.summary.value.add(tag="accuracy")
        value.metadata.plugin_data.plugin_name = "scalars"
        value.tensor.dtype = 1  # DT_FLOAT
        value.tensor.float_val.append(step / 100.0)
        validation.write(accuracy)
        print("step", step, "loss", loss.summary.value[0].simple_value, "at", loss.wall_time,
              flush=True)
        time.sleep(pause)
    print("wrote", steps, "steps to", log_dir, file=sys.stderr)
    report = os.environ.get("CLOUD_ML_HP_METRIC_FILE")
    if report:
        os.makedirs(os.path.dirname(report), exist_ok=True)
        with open(report, "a") as out:
            out.write(json.dumps({"accuracy": str((steps - 1) / 100.0),
                                  "global_step": str(steps), "timestamp": time.time()}) + "\n")


main()
