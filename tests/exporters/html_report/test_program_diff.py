"""Program diffs read from Objects: unified, and bounded against what an untrusted record may hold."""

from __future__ import annotations

from evoledger.exporters.html_report.program_diff import MAX_DIFF_LINES, MAX_FILE_BYTES, program_diff
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import ObjectEvictedError


class _Objects:
    """An Object store in a dict; ``evicted`` digests raise as the real store does."""

    def __init__(self, *blobs: bytes, evicted: tuple[bytes, ...] = ()) -> None:
        self.data = {digest_of(b): b for b in blobs}
        self.gone = {digest_of(b): b for b in evicted}

    def size(self, digest: str) -> int:
        return len(self.data.get(digest) or self.gone[digest])

    def get(self, digest: str) -> bytes:
        if digest in self.gone:
            raise ObjectEvictedError(f"{digest} was evicted")
        return self.data[digest]


def test_a_changed_added_and_removed_file() -> None:
    old, new, extra = b"a = 1\nb = 2\n", b"a = 1\nb = 3\n", b"x\n"
    objects = _Objects(old, new, extra)
    diff = program_diff(
        objects,
        {"p.py": digest_of(old), "gone.txt": digest_of(extra)},
        {"p.py": digest_of(new), "n.txt": digest_of(extra)},
    )
    assert diff.splitlines() == [
        "--- a/gone.txt",
        "+++ /dev/null",
        "@@ -1 +0,0 @@",
        "-x",
        "--- /dev/null",
        "+++ b/n.txt",
        "@@ -0,0 +1 @@",
        "+x",
        "--- a/p.py",
        "+++ b/p.py",
        "@@ -1,2 +1,2 @@",
        " a = 1",
        "-b = 2",
        "+b = 3",
    ]
    assert program_diff(objects, {"p.py": digest_of(old)}, {"p.py": digest_of(old)}) == ""


def test_a_first_program_is_all_additions() -> None:
    text = b"def make_policy(context):\n    return None\n"
    assert program_diff(_Objects(text), None, {"policy.py": digest_of(text)}).splitlines()[:2] == [
        "--- /dev/null",
        "+++ b/policy.py",
    ]


def test_diffs_are_bounded() -> None:
    long_old = "".join(f"line {i}\n" for i in range(3 * MAX_DIFF_LINES)).encode()
    long_new = "".join(f"LINE {i}\n" for i in range(3 * MAX_DIFF_LINES)).encode()
    wide = b"x" * 5000 + b"\n"
    huge = b"y" * (MAX_FILE_BYTES + 1)
    binary, evicted = b"\xff\xfe\x00", b"old bytes\n"
    objects = _Objects(long_old, long_new, wide, huge, binary, evicted=(evicted,))
    lines = program_diff(objects, {"a.py": digest_of(long_old)}, {"a.py": digest_of(long_new)}).splitlines()
    assert len(lines) == MAX_DIFF_LINES + 1
    assert lines[-1].startswith(f"... diff cut after {MAX_DIFF_LINES} lines")
    cut = program_diff(objects, None, {"w.py": digest_of(wide)}).splitlines()[-1]
    assert cut == "+" + "x" * 399 + "..."
    assert "above the 262144-byte diff limit" in program_diff(objects, None, {"h.bin": digest_of(huge)})
    assert "a binary file" in program_diff(objects, None, {"b.bin": digest_of(binary)})
    assert "cannot be read (ObjectEvictedError)" in program_diff(
        objects, {"e": digest_of(evicted)}, {"e": digest_of(wide)}
    )
