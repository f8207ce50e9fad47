"""What the raw-float32 PyTorch references share (kernels_reference.py, stats_reference.py):
the output folder from argv, a seeded generator, randn from it, save() as raw float32 and the
manifest the C++ test reads (tests/reference_run.hpp runs the script into a temporary folder)."""
import os
import sys

import torch


class RawReference:
    def __init__(self, seed):
        torch.set_num_threads(1)  # the course's reference transcripts were made with 1 thread
        self.out_dir = sys.argv[1]
        os.makedirs(self.out_dir, exist_ok=True)
        self.manifest = []
        self.gen = torch.Generator().manual_seed(seed)

    def randn(self, *shape, scale=1.0, shift=0.0):
        return torch.randn(*shape, generator=self.gen) * scale + shift

    def save(self, name, t):
        t.detach().contiguous().to(torch.float32).numpy().tofile(os.path.join(self.out_dir, name))

    def finish(self):
        with open(os.path.join(self.out_dir, "manifest.txt"), "w") as f:
            f.write("\n".join(self.manifest) + "\n")
        # which PyTorch made these numbers: the C++ test replays that version's kernels
        with open(os.path.join(self.out_dir, "torch_version.txt"), "w") as f:
            f.write(torch.__version__ + "\n")
        print(f"wrote {len(self.manifest)} cases to {self.out_dir}")
