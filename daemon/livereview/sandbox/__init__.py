"""Sandbox: stateful in-memory fakes of each host (one package per host, mirroring
`livereview.hosts`), the fake model server and the loopback HTTP plumbing they share; for
the end-to-end tests and `livereview demo`."""
