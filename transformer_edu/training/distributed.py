"""Data-parallel training with ``torch.distributed`` and ``torchrun`` (Chapter 9).

The paper trained on 8 GPUs at once. The way PyTorch does it, and the way
this package does it, is data parallelism with
:class:`~torch.nn.parallel.DistributedDataParallel` (DDP):

1. ``torchrun --nproc_per_node N`` starts N copies of the same program, and
   tells each its ``RANK`` (0 … N − 1) and the ``WORLD_SIZE`` N through
   environment variables; :func:`init_from_env` reads them and joins the
   process group (gloo on CPU, NCCL on CUDA).
2. DDP copies rank 0's weights to every process, so all start equal.
3. Every process builds the same global batch and takes its share,
   :func:`my_parts` (each a :meth:`~transformer_edu.data.batching.Batch.split`
   of it), runs forward and backward on it, and DDP adds up the gradients
   of all processes (an all-reduce) during the backward pass.
4. Every process then takes the same optimizer step with the same
   gradients, so the weights stay equal without ever being sent again.

Step 3 equals one big batch only if every process weights its loss by its
share of the global batch's target tokens: :class:`~transformer_edu.training.scale.Updater`
scales each part's mean loss by ``tokens in the part / tokens in the global
batch``, times N because DDP averages (divides by N) where one process would
sum. With dropout off, N processes then reach the same weights as one, up to
the order of float additions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from ..data.batching import Batch

__all__ = ["World", "init_from_env", "my_parts", "close"]


@dataclass(frozen=True)
class World:
    """Which process this is among how many (``rank`` of ``size``); ``World()`` is one process alone.

    Attributes:
        rank: this process's number, 0 … size − 1; rank 0 writes the files and the progress bar.
        size: the number of processes (``WORLD_SIZE``).
        local_rank: its number on this machine, which picks its GPU.
    """

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        """Whether this is rank 0, the process that writes checkpoints, metrics and the progress bar."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        """Whether there is more than one process (and so a process group)."""
        return self.size > 1

    def all_reduce_sum(self, values: list[float]) -> list[float]:
        """The sums of ``values`` over every process (the values themselves for one process)."""
        if not self.distributed:
            return list(values)
        device = "cuda" if dist.get_backend() == "nccl" else "cpu"
        total = torch.tensor(values, dtype=torch.float64, device=device)  # (n,)
        dist.all_reduce(total)
        return total.tolist()

    def broadcast(self, flag: bool) -> bool:
        """Rank 0's ``flag``, on every process: decisions such as stopping early are taken once."""
        if not self.distributed:
            return flag
        device = "cuda" if dist.get_backend() == "nccl" else "cpu"
        value = torch.tensor([int(flag)], device=device)  # (1,)
        dist.broadcast(value, src=0)
        return bool(value.item())


def init_from_env(device: str | torch.device = "cpu") -> World:
    """Join the process group ``torchrun`` set up, or return ``World()`` when run without it.

    Reads ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK``; with more than one
    process, initialises the default process group with gloo (CPU) or NCCL
    (CUDA, each process on GPU ``LOCAL_RANK``).

    Args:
        device: ``"cpu"`` or ``"cuda"``: the device the training runs on.

    Raises:
        ValueError: the environment variables are not whole numbers, or
            CUDA is asked for with more processes than GPUs.
    """
    try:
        rank, size, local = (int(os.environ.get(name, default))
                             for name, default in (("RANK", 0), ("WORLD_SIZE", 1), ("LOCAL_RANK", 0)))
    except ValueError:
        raise ValueError("RANK, WORLD_SIZE and LOCAL_RANK must be whole numbers (torchrun sets them), got "
                         f"{[os.environ.get(n) for n in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK')]}") from None
    if not 0 <= rank < size:
        raise ValueError(f"RANK={rank} is not in [0, WORLD_SIZE={size})")
    world = World(rank, size, local)
    if not world.distributed:
        return world
    cuda = torch.device(device).type == "cuda"
    if cuda:
        if local >= torch.cuda.device_count():
            raise ValueError(f"LOCAL_RANK={local} but only {torch.cuda.device_count()} GPU(s): start at most "
                             "one process per GPU (torchrun --nproc_per_node)")
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo")
    return world


def my_parts(batch: Batch, world: World, accumulate: int = 1) -> list[Batch | None]:
    """This process's share of a global ``batch``, in ``accumulate`` micro-batches.

    The batch's rows are dealt into ``world.size · accumulate`` parts
    (:meth:`~transformer_edu.data.batching.Batch.split`); process ``r`` gets
    parts ``r, r + size, …``. A ``None`` part holds no row (a last batch
    smaller than the number of parts).
    """
    parts = batch.split(world.size * accumulate)
    return parts[world.rank::world.size]


def close(world: World) -> None:
    """Leave the process group (at the end of a ``torchrun`` process)."""
    if world.distributed and dist.is_initialized():
        dist.destroy_process_group()
