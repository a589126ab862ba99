"""A Host's ed25519 signing key: where it lives, how it is created and loaded, and how it is shown to others.

The default key is ``signing-key.pem`` in the user's evoledger directory: ``$EVOLEDGER_HOME`` if set, else
``$XDG_CONFIG_HOME/evoledger``, else ``~/.config/evoledger``. It is created on first use: the directory with
mode 0700, the key (PKCS#8 PEM, unencrypted) with mode 0600, written to a temporary file, fsynced and linked
into place, so a crash never leaves half a key and an existing key is never overwritten. Neither the key nor
the evoledger directory may be a symlink, and a key readable by others is refused (as ``ssh`` does).

A public key is shown to others in one line, its *text form*::

    evoledger-ed25519 <64 hex digits of the raw public key>

and named by its *fingerprint*, ``ed25519:`` + the first 16 bytes of the sha256 of the raw key in hex.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from evoledger.ledger.errors import ConfigError, InputError

__all__ = [
    "HOME_ENV",
    "KEY_FILE_NAME",
    "PUBLIC_KEY_PREFIX",
    "PublicKey",
    "SigningKey",
    "create_key_file",
    "default_key_path",
    "evoledger_home",
    "fingerprint_of",
    "load_key_file",
    "load_or_create_default_key",
    "parse_trusted_key",
]

HOME_ENV: Final = "EVOLEDGER_HOME"
KEY_FILE_NAME: Final = "signing-key.pem"
PUBLIC_KEY_PREFIX: Final = "evoledger-ed25519"
_MAX_KEY_FILE_BYTES: Final = 16 * 1024
_PUBLIC_HEX: Final = re.compile(r"^[0-9a-f]{64}$")
_FINGERPRINT: Final = re.compile(r"^ed25519:[0-9a-f]{32}$")


def fingerprint_of(raw_public_key: bytes) -> str:
    """``ed25519:`` + the first 16 bytes of sha256(raw public key), in hex."""
    return "ed25519:" + hashlib.sha256(raw_public_key).digest()[:16].hex()


@dataclass(frozen=True, slots=True)
class PublicKey:
    """An ed25519 public key (32 raw bytes): what a signature is checked against."""

    raw: bytes

    @property
    def hex(self) -> str:
        return self.raw.hex()

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self.raw)

    @property
    def text(self) -> str:
        """The one-line text form given to reviewers (``evoledger keys export``)."""
        return f"{PUBLIC_KEY_PREFIX} {self.hex}"

    @classmethod
    def from_hex(cls, text: str) -> PublicKey:
        if not _PUBLIC_HEX.match(text):
            raise InputError(f"{text!r:.80} is not an ed25519 public key (64 lowercase hex digits)")
        return cls(bytes.fromhex(text))

    def verifies(self, signature: bytes, message: bytes) -> bool:
        """Whether ``signature`` is this key's ed25519 signature of ``message``."""
        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True


class SigningKey:
    """An ed25519 private key and where it came from (``path``; ``None`` for a key made in memory)."""

    def __init__(self, private: Ed25519PrivateKey, path: Path | None = None) -> None:
        self._private: Final = private
        self.path: Final = path
        self.public: Final = PublicKey(
            private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        )

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, seed: bytes) -> SigningKey:
        """The key whose 32-byte private seed is ``seed`` (tests and reproducible fixtures only)."""
        if len(seed) != 32:
            raise InputError(f"an ed25519 seed is 32 bytes, got {len(seed)}")
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    @property
    def fingerprint(self) -> str:
        return self.public.fingerprint

    def sign(self, message: bytes) -> bytes:
        return self._private.sign(message)

    def pem(self) -> bytes:
        return self._private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    def __repr__(self) -> str:  # never the private bytes
        return f"SigningKey({self.fingerprint}, path={self.path})"


def evoledger_home() -> Path:
    """The user's evoledger folder: ``$EVOLEDGER_HOME``, ``$XDG_CONFIG_HOME/evoledger`` or ``~/.config/evoledger``."""
    explicit = os.environ.get(HOME_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".config"
    return base / "evoledger"


def default_key_path() -> Path:
    """Where the default signing key lives (it may not exist yet)."""
    return evoledger_home() / KEY_FILE_NAME


def load_or_create_default_key() -> SigningKey:
    """The default signing key, created on first use (see the module docstring)."""
    path = default_key_path()
    try:
        return create_key_file(path)
    except _KeyExistsError:
        return load_key_file(path)


class _KeyExistsError(ConfigError):
    pass


def _private_dir(directory: Path) -> None:
    """Create ``directory`` with mode 0700 if absent; refuse it if it is a symlink or not a directory."""
    try:
        info = directory.lstat()
    except FileNotFoundError:
        directory.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, 0o700)
        info = directory.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise ConfigError(
            f"the key directory {directory} is a symlink; evoledger never writes a key through a link. "
            "Replace it by a real directory or choose another path"
        )
    if not stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{directory} is not a directory; it cannot hold a signing key")


def create_key_file(path: Path) -> SigningKey:
    """Generate a new key into ``path`` (mode 0600; its directory created 0700); never overwrites a file.

    The key is written to a temporary file in the same directory, fsynced and hard-linked to ``path``
    (which fails if anything, a symlink included, already has that name), then the temporary name is removed.
    """
    path = Path(path)
    _private_dir(path.parent)
    if os.path.lexists(path):
        raise _KeyExistsError(
            f"{path} already exists; evoledger never overwrites a signing key. Use it with --signing-key {path}, "
            "or choose another --out path"
        )
    key = SigningKey.generate()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)  # whatever the umask
            os.write(fd, key.pem())
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path, follow_symlinks=False)
        except FileExistsError:
            raise _KeyExistsError(f"{path} appeared while the key was being written; it was left as it is") from None
    finally:
        tmp.unlink(missing_ok=True)
    return SigningKey(key._private, path)


def load_key_file(path: Path) -> SigningKey:
    """Read a private key written by :func:`create_key_file` (or any unencrypted PKCS#8 ed25519 PEM).

    Refused with :class:`ConfigError`: a symlink, anything but a regular file, a file readable or writable by
    group or others, a file over 16 KiB, or anything that is not an ed25519 private key.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ConfigError(f"no signing key at {path}; create one with 'evoledger keys create --out {path}'") from None
    except OSError as exc:
        if os.path.islink(path):
            raise ConfigError(
                f"the signing key {path} is a symlink; evoledger never reads a key through a link. "
                "Pass the real file's path"
            ) from None
        raise ConfigError(f"cannot open the signing key {path}: {exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"the signing key {path} is not a regular file")
        if info.st_mode & 0o077:
            raise ConfigError(
                f"the signing key {path} has mode {stat.S_IMODE(info.st_mode):04o}: others may read it, so it "
                f"cannot be trusted to be yours alone. Restrict it with 'chmod 600 {path}' (or create a new key)"
            )
        if info.st_size > _MAX_KEY_FILE_BYTES:
            raise ConfigError(f"{path} is {info.st_size} bytes, too large to be an ed25519 key")
        data = os.read(fd, _MAX_KEY_FILE_BYTES + 1)
    finally:
        os.close(fd)
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{path} is not an unencrypted PEM private key ({exc})") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise ConfigError(f"{path} holds a {type(private).__name__}, not an ed25519 key")
    return SigningKey(private, path)


def parse_trusted_key(value: str) -> PublicKey | str:
    """What ``--trusted-key`` names: a public key (text form, a file holding it, a PEM public key) or a fingerprint.

    Returns a :class:`PublicKey`, or the fingerprint string when only a fingerprint was given.
    """
    text = value.strip()
    if _FINGERPRINT.match(text):
        return text
    if text.startswith(PUBLIC_KEY_PREFIX + " "):
        return PublicKey.from_hex(text.removeprefix(PUBLIC_KEY_PREFIX + " ").strip())
    path = Path(value)
    if not path.is_file():
        raise InputError(
            f"--trusted-key {value!r:.100} is neither a fingerprint (ed25519:<32 hex>), nor a public key "
            f"('{PUBLIC_KEY_PREFIX} <64 hex>'), nor a file; ask the Run's author for 'evoledger keys export'"
        )
    with path.open("rb") as handle:
        data = handle.read(_MAX_KEY_FILE_BYTES + 1)
    if b"PRIVATE KEY" in data:
        raise InputError(
            f"{path} is a private key; verification needs only the public one: 'evoledger keys export --key {path}'"
        )
    content = data.decode("utf-8", "replace").strip()
    if content.startswith(PUBLIC_KEY_PREFIX + " "):
        return PublicKey.from_hex(content.removeprefix(PUBLIC_KEY_PREFIX + " ").strip())
    try:
        public = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        raise InputError(
            f"{path} holds no public key: expected one line '{PUBLIC_KEY_PREFIX} <64 hex>' (from "
            "'evoledger keys export') or an ed25519 PEM public key"
        ) from None
    if not isinstance(public, Ed25519PublicKey):
        raise InputError(f"{path} holds a {type(public).__name__}, not an ed25519 public key")
    return PublicKey(public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
