"""TLS is always verified; a private CA is trusted through the host's ca_bundle."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from livereview.sandbox.gitlab.server import FakeGitLabServer
from tests.e2e.conftest import TOKEN, Sandbox


@pytest.fixture
def https_gitlab(sandbox: Sandbox, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The sandbox's GitLab state served over HTTPS with a certificate of a private CA."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",  # noqa: S603
                    "-subj", "/CN=gitlab.internal", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = FakeGitLabServer(sandbox.gitlab, tls=context).start()
    config = sandbox.config.read_text().replace(sandbox.gitlab_server.url, server.url)
    sandbox.config.write_text(config)
    yield server.url, cert
    server.stop()


def check(sandbox: Sandbox) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(sandbox.config), "check"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN})


def test_an_unknown_ca_is_refused_with_what_to_set(sandbox: Sandbox,
                                                   https_gitlab: tuple[str, Path]) -> None:
    result = check(sandbox)
    assert result.returncode == 1
    assert "TLS verification of 127.0.0.1 failed" in result.stdout
    assert "set this host's ca_bundle to the CA's PEM file" in result.stdout
    assert "Traceback" not in result.stderr


def test_the_hosts_ca_bundle_is_trusted(sandbox: Sandbox,
                                        https_gitlab: tuple[str, Path]) -> None:
    _, cert = https_gitlab
    sandbox.config.write_text(sandbox.config.read_text().replace(
        'token_env = "LIVEREVIEW_E2E_TOKEN"',
        f'token_env = "LIVEREVIEW_E2E_TOKEN"\nca_bundle = "{cert}"'))
    result = check(sandbox)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "@livereview" in result.stdout
