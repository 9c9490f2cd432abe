# inferwatch serve in a container. Not built in this repository's CI (no container engine
# there): `hadolint Dockerfile` lints it (tests/export/test_dockerfile.py).
#
#   docker build -t inferwatch:0.1.0 .
#   docker run -p 9464:9464 inferwatch:0.1.0                       # the built-in defaults
#   docker run -p 9464:9464 -v "$PWD/inferwatch.yaml:/etc/inferwatch/inferwatch.yaml:ro" \
#       inferwatch:0.1.0 serve --config /etc/inferwatch/inferwatch.yaml
#
# The image runs as the non-root user 10001 (the Kubernetes export's runAsUser), keeps its
# SQLite files in /var/lib/inferwatch (a volume) and is healthy once /-/ready answers 200.
# With --config, the config's server.listen must be 0.0.0.0:9464 (as the Kubernetes export's).

# --- build: a wheel of the project -------------------------------------------------------
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

# --- run ---------------------------------------------------------------------------------
FROM python:3.11-slim-bookworm
ARG UID=10001
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    INFERWATCH_DATA_DIR=/var/lib/inferwatch
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl \
    && rm -rf /wheels \
    && groupadd --system --gid "${UID}" inferwatch \
    && useradd --system --uid "${UID}" --gid inferwatch --home-dir /var/lib/inferwatch \
       --shell /usr/sbin/nologin inferwatch \
    && mkdir -p /var/lib/inferwatch /etc/inferwatch \
    && chown inferwatch:inferwatch /var/lib/inferwatch
USER ${UID}:${UID}
WORKDIR /var/lib/inferwatch
VOLUME ["/var/lib/inferwatch"]
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9464/-/ready', timeout=4)"]
ENTRYPOINT ["inferwatch"]
CMD ["serve", "--listen", "0.0.0.0:9464"]
