"""Images per second per CPU core of the input pipelines the planner's input term uses
(docs/planner.md, "Input pipelines"): JPEG decoding alone, the standard ImageNet training
transform, and a DeiT-style one (RandAugment and random erasing), one process, one thread.

  PYTHONPATH=DIR_WITH_PILLOW_AND_TORCHVISION .venv/bin/python scripts/measure-input-pipeline.py \
      PHOTO.jpg [PHOTO.jpg ...] [--count 400] [--repeats 5]

The photos are re-encoded at ImageNet's most common size (500 x 375) and quality 90 to stand in
for its training images. Pillow and torchvision are not build dependencies; install them for the
measurement only (pip install --target DIR pillow torchvision==0.26.0 --no-deps).
"""
import argparse
import io
import platform
import statistics
import time

import torch
from PIL import Image
from torchvision import transforms as T

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)

PIPELINES = {
    "decode": lambda image: image,
    "standard": T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                           T.Normalize(MEAN, STD)]),
    # DeiT's training transform (timm create_transform: rand-m9-mstd0.5-inc1, reprob 0.25);
    # Mixup/CutMix act on whole batches on the GPU and are left out.
    "deit": T.Compose([T.RandomResizedCrop(224, interpolation=T.InterpolationMode.BICUBIC),
                       T.RandomHorizontalFlip(), T.RandAugment(num_ops=2, magnitude=9),
                       T.ToTensor(), T.Normalize(MEAN, STD), T.RandomErasing(p=0.25)]),
}


def jpegs(paths, count):
    out = []
    for i in range(count):
        image = Image.open(paths[i % len(paths)]).convert("RGB").resize((500, 375))
        if i % 2:
            image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=90)
        out.append(buffer.getvalue())
    return out


def rate(data, transform):
    start = time.perf_counter()
    for blob in data:
        transform(Image.open(io.BytesIO(blob)).convert("RGB"))
    return len(data) / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("photos", nargs="+")
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    data = jpegs(args.photos, args.count)
    print(f"{platform.processor() or platform.machine()}, Pillow {Image.__version__}, "
          f"torch {torch.__version__}; {len(data)} JPEGs of 500x375, "
          f"{sum(map(len, data)) / len(data) / 1024:.0f} KiB on average")
    for name, transform in PIPELINES.items():
        rates = [rate(data, transform) for _ in range(args.repeats)]
        print(f"{name:9s} {statistics.median(rates):7.0f} images/s per core "
              f"(median of {args.repeats}; {min(rates):.0f}-{max(rates):.0f})")


if __name__ == "__main__":
    main()
