"""The lab's writes: whole files or nothing. A file is written to a short
temporary name in its folder, then renamed over the target, so a reader
never sees half of it, an interrupted write leaves none of it, and a target
that is a FIFO or a device is replaced rather than opened (and waited on)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes | str, mode: int | None = None) -> None:
    """Write `data` (text as UTF-8) to `path` through a temporary file in the
    same folder and a rename; the folder must exist. `mode`: the permission
    bits the file gets (the temporary's 0600 otherwise), e.g. those of the
    file it replaces. OSError on failure, with the temporary removed."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".lab-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            if mode is not None:
                os.fchmod(f.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
