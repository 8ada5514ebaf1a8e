"""Data-parallel training with torch.distributed (gloo, env://) and DistributedDataParallel.

A 2-layer MLP learns a regression on a synthetic data set made from a fixed seed. Every
rank makes the same data set and trains on its own shard (DistributedSampler); DDP
averages the gradients, so all ranks end with identical weights, which each rank prints
on one line:

    [rank R] final weights: <sha256 of the params rounded to 6 decimals> <first 4 values>

Rank 0 saves the state_dict to $AIP_MODEL_DIR/model.pt (Vertex baseOutputDirectory),
or to --job-dir (AI Platform) or --model-dir; gs://B/p is written as /gcs/B/p.

The training service sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK (Vertex AI,
AI Platform Training and Trainyard all do); without them it trains alone (world of 1).
"""
import argparse
import hashlib
import os
import socket
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def log(rank, msg):
    print("[rank %d] %s" % (rank, msg), flush=True)


def local_path(uri):
    """gs://BUCKET/path -> /gcs/BUCKET/path (the bucket mount inside the replica)."""
    return "/gcs/" + uri[len("gs://"):] if uri.startswith("gs://") else uri


def default_route_interface():
    """The interface of the default route: gloo must bind its sockets to the network the
    peers reach us on (the container's host name may not resolve to that address)."""
    try:
        with open("/proc/net/route") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if len(fields) > 1 and fields[1] == "00000000":
                    return fields[0]
    except OSError:
        pass
    return None


def wait_for_name(rank, host, timeout_s):
    """Peers' host names resolve once their containers are up; wait for that."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.getaddrinfo(host, None)
            return
        except socket.gaierror as e:
            if time.monotonic() > deadline:
                raise SystemExit("cannot resolve MASTER_ADDR %s: %s" % (host, e))
            log(rank, "waiting for %s to resolve" % host)
            time.sleep(0.5)


def make_data(n, features, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    w = torch.randn(features, 1, generator=g)
    y = torch.tanh(x @ w) + 0.1 * (x[:, :1] ** 2) + 0.05 * torch.randn(n, 1, generator=g)
    return TensorDataset(x, y)


def fingerprint(model):
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    text = ",".join("%.6f" % v for v in flat.tolist())
    first = " ".join("%.6f" % v for v in flat[:4].tolist())
    return "%s %s" % (hashlib.sha256(text.encode()).hexdigest(), first)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--samples", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model-dir", default=None)
    ap.add_argument("--job-dir", default=None)
    ap.add_argument("--connect-timeout", type=int, default=300)
    args, _ = ap.parse_known_args()  # Services append their own arguments.

    # Peers' names appear in the network's DNS as their containers start, and podman's
    # DNS server may not answer for a moment meanwhile: fail lookups fast and retry
    # (glibc's default is 5 s x 2 attempts per server and query).
    os.environ.setdefault("RES_OPTIONS", "timeout:1 attempts:1")
    torch.set_num_threads(1)  # Several replicas may share a few cores.
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        os.environ.setdefault("MASTER_PORT", "2222")
        if "GLOO_SOCKET_IFNAME" not in os.environ and default_route_interface():
            os.environ["GLOO_SOCKET_IFNAME"] = default_route_interface()
        log(rank, "joining world of %d via %s:%s (gloo on %s)" % (
            world, os.environ.get("MASTER_ADDR"), os.environ["MASTER_PORT"],
            os.environ.get("GLOO_SOCKET_IFNAME", "default")))
        if rank != 0:
            wait_for_name(rank, os.environ["MASTER_ADDR"], args.connect_timeout)
        # env:// reads MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE; non-zero ranks keep
        # retrying the connection to rank 0's store until the timeout.
        dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                                timeout=timedelta(seconds=args.connect_timeout))
        log(rank, "process group ready")

    dataset = make_data(args.samples, 8, args.seed)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    torch.manual_seed(args.seed)  # Same initial weights everywhere (DDP also broadcasts rank 0's).
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    if world > 1:
        model = DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    log(rank, "training on %d of %d samples" % (len(sampler), len(dataset)))

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = torch.zeros(2)
        for x, y in loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()  # DDP averages the gradients across ranks here.
            opt.step()
            total += torch.tensor([loss.item() * len(x), len(x)])
        local = total[0].item() / total[1].item()
        if world > 1:
            dist.all_reduce(total)  # Sum over ranks: the epoch's global mean loss.
        log(rank, "epoch %d: local loss %.5f, global loss %.5f" % (epoch + 1, local, total[0].item() / total[1].item()))

    net = model.module if world > 1 else model
    log(rank, "final weights: %s" % fingerprint(net))
    if rank == 0:
        out = args.model_dir or os.environ.get("AIP_MODEL_DIR") or args.job_dir
        if out:
            out = local_path(out)
            os.makedirs(out, exist_ok=True)
            torch.save(net.state_dict(), os.path.join(out, "model.pt"))
            log(rank, "saved %s" % os.path.join(out, "model.pt"))
    if world > 1:
        # Nobody leaves before everyone has printed: the service stops the other
        # replicas as soon as the primary exits 0.
        dist.barrier()
        dist.destroy_process_group()
    log(rank, "done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
