"""The Session protocol with the standard library only, for Agent scripts the tests write.

Importing evoledger would cost ~0.7 s per Agent process, so test Agents speak the wire protocol directly:
a script adds this folder to ``sys.path`` and does ``from session_call import call``.
"""

from __future__ import annotations

import json
import os
import socket
import struct
from typing import Any


def call(method: str, **params: Any) -> Any:
    """Send one request to the live Run's Session socket and return the decoded response."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.environ["EVOLEDGER_SESSION_SOCKET"])
    request = {"protocol": "evoledger.session/1", "id": "a", "method": method, "params": params}
    body = json.dumps(request, separators=(",", ":")).encode()  # compact: a field's bound, not the frame's, is met
    s.sendall(struct.pack(">I", len(body)) + body)
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError("the Host closed the connection")
        data += chunk
    s.close()
    return json.loads(data[4:])
