# syntax=docker/dockerfile:1
# livereview in a container: non-root, state on a volume, config and token mounted.
#   docker build -t livereview .
#   docker run -d --name livereview --stop-timeout 45 -v livereview-state:/var/lib/livereview \
#     -v "$PWD/livereview.toml:/etc/livereview/livereview.toml:ro" \
#     -e LIVEREVIEW_GITLAB_TOKEN -e OPENAI_API_KEY -p 127.0.0.1:9464:9464 livereview
# In the mounted config, set metrics_listen = "0.0.0.0:9464" so the published port reaches it.
# --stop-timeout 45: SIGTERM gets shutdown_grace_seconds (30) as under systemd, not Docker's 10.

FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE constraints.txt ./
COPY daemon ./daemon
# constraints.txt: the dependency versions the tests passed with
RUN pip wheel --no-cache-dir --wheel-dir /wheels -c constraints.txt .

FROM python:3.12-slim
RUN groupadd --system --gid 10001 livereview \
    && useradd --system --uid 10001 --gid livereview --home-dir /var/lib/livereview \
       --shell /usr/sbin/nologin livereview \
    && install -d -o livereview -g livereview -m 0700 /var/lib/livereview \
    && install -d -m 0755 /etc/livereview
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
ENV LIVEREVIEW_CONFIG=/etc/livereview/livereview.toml \
    STATE_DIRECTORY=/var/lib/livereview \
    PYTHONUNBUFFERED=1
VOLUME ["/var/lib/livereview"]
USER 10001:10001
EXPOSE 9464
HEALTHCHECK --interval=60s --timeout=15s --start-period=60s --retries=3 \
    CMD ["livereview", "health"]
ENTRYPOINT ["livereview"]
CMD ["run"]
