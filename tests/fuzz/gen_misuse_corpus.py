#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seeds of the issue 15 fuzz targets (docs/robustness.md):

hrt_inputs_corpus/: files for hrt_model_exec's input readers, each after a
two-byte prefix (suffix and input kind; the replay tries every pair):
small PNG/JPEG images (colour, gray, odd size), a truncated PNG, headers
claiming 100000x100000 and 32000x32000, a bin and a txt input.

capi_corpus/: scripts of the C API sequence fuzzer: a thread-count byte,
then (operation, argument) pairs dealt round-robin to the threads
(fuzz_capi_sequences.cc: 0 load, 1 release pack, 2 get handle, 3 getters,
4 alloc, 5 infer, 6 wait, 7 release task, 8 free, 9 callback).

Run with /usr/bin/python3 (needs Pillow) from the repository root:
  /usr/bin/python3 tests/fuzz/gen_misuse_corpus.py tests/fuzz
"""
import io
import os
import struct
import sys

from PIL import Image


def image(mode, size, fmt):
    w, h = size
    img = Image.new(mode, size)
    px = img.load()
    for y in range(h):
        for x in range(w):
            v = (x * 37 + y * 91) % 256
            px[x, y] = v if mode == "L" else (v, 255 - v, (v * 3) % 256)
    buf = io.BytesIO()
    img.save(buf, format=fmt)
    return buf.getvalue()


def png_header(w, h):
    ihdr = struct.pack(">II", w, h) + bytes([8, 2, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0\0\0\0" + b"\x5a" * 200


def jpeg_header(w, h):
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0\1\1\0\0\1\0\1\0\0"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, h, w, 3) + bytes([1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])
    return b"\xff\xd8" + app0 + sof + b"\x5a" * 200


def hrt_inputs():
    png = image("RGB", (16, 16), "PNG")
    return {
        "png_rgb_16x16": png,
        "png_gray_16x16": image("L", (16, 16), "PNG"),
        "png_rgb_9x7": image("RGB", (9, 7), "PNG"),
        "jpg_rgb_16x16": image("RGB", (16, 16), "JPEG"),
        "jpg_gray_20x12": image("L", (20, 12), "JPEG"),
        "png_truncated": png[: len(png) // 2],
        "png_header_100000x100000": png_header(100000, 100000),
        "png_header_32000x32000": png_header(32000, 32000),
        "jpg_header_32000x32000": jpeg_header(32000, 32000),
        "bin_f32_1x3x8x8": struct.pack("<192f", *[i / 192 for i in range(192)]),
        "txt_192_numbers": " ".join(str(i % 7 - 3) for i in range(192)).encode(),
        "txt_not_numbers": b"1 2 3 abc 5",
    }


def script(threads, ops):
    return bytes([threads - 1]) + bytes(b for op in ops for b in op)


def capi_scripts():
    setup = [(0, 0), (2, 0), (4, 0)]  # load slot 0, get its model, alloc buffers
    return {
        # one thread: infer, free (refused while the chain is open), close, wait, free
        "single_chain_free": script(1, setup + [(5, 1), (8, 0), (8, 1), (5, 0), (6, 0), (8, 0), (7, 0)]),
        # four threads: all infer while thread 0 releases the pack repeatedly
        "release_racing_infer": script(4, setup * 4 + [(5, 0), (5, 0), (5, 0), (1, 0)] * 6 + [(6, 0), (7, 0), (3, 0), (1, 0)] * 4),
        # getters racing a release and a reload into the same slot
        "getters_release_reload": script(3, setup * 3 + [(3, 0), (3, 0), (1, 0)] * 8 + [(0, 0), (2, 0), (3, 0)] * 4),
        # two packs, callbacks, waits with timeouts, frees racing tasks
        "two_packs_callbacks": script(2, [(0, 0), (0, 1), (2, 0), (2, 1), (4, 0), (4, 0)] + [(5, 0), (9, 0), (8, 0), (6, 3), (7, 0), (8, 1), (4, 0), (1, 1)] * 5),
    }


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for sub, files, prefix in (("hrt_inputs_corpus", hrt_inputs(), b"\0\0"), ("capi_corpus", capi_scripts(), b"")):
        d = os.path.join(root, sub)
        os.makedirs(d, exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(prefix + data)
        print(f"{d}: {len(files)} files")


if __name__ == "__main__":
    main()
