"""The fake model answers at once: nothing on its side of the socket delays an answer."""

from __future__ import annotations

import socket

from livereview.sandbox.llm_server import _Handler


def test_the_fake_model_sends_its_answer_without_waiting_for_the_ack_of_its_headers() -> None:
    """Its headers and its body are two writes; with Nagle's algorithm on, the body waited
    for the client's delayed ACK of the headers (40 ms on Linux) — half the answers of a
    model "answering at once" took 40 ms (bench figure 6)."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname()[:2])
        accepted, _ = listener.accept()
        with client, accepted:
            handler = _Handler.__new__(_Handler)
            handler.request = accepted
            handler.setup()
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
            handler.finish()
