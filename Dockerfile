# syntax=docker/dockerfile:1
#
# transfer-watch container image.
#
#   docker build -t transfer-watch .
#   docker run --rm -p 9464:9464 -v tw-state:/var/lib/transfer-watch \
#     -v "$PWD/config.yaml:/etc/transfer-watch/config.yaml:ro" -e MFT_USER -e MFT_PASSWORD transfer-watch
#   docker run --rm -p 9464:9464 transfer-watch demo --host 0.0.0.0     # no setup: the built-in simulator
#
# Three stages: `build` compiles TypeScript with the dev dependencies; `deps` installs the production
# dependencies only, from the same lockfile; the runtime stage takes dist/ from the first and node_modules/
# from the second, so no compiler, test tool or dev dependency reaches the image.
# Pin the base by digest in your own builds (node:24-slim@sha256:...) for reproducible images.
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Only tsc runs here: no install script.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No dependency needs an install script; not running them is one less way in for a compromised package. The
# optional better-sqlite3 (the history's SQLite on Node 20) is left out: this image's Node has node:sqlite.
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ARG NODE_IMAGE
# Set by the release build: docker build --build-arg VERSION=... --build-arg REVISION=$(git rev-parse HEAD) ...
ARG VERSION=0.1.0
ARG REVISION=""
ARG CREATED=""
ARG SOURCE=""
LABEL org.opencontainers.image.title="transfer-watch" \
      org.opencontainers.image.description="Monitoring and alerting for managed-file-transfer (MFT) transfer history: Prometheus metrics and Slack, email, Alertmanager and webhook alerts." \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
# NODE_ENV=production: libraries take their production paths. TRANSFER_WATCH_STATE_DIR is read by the example
# config (state.dir: ${TRANSFER_WATCH_STATE_DIR:-./data}), so the bundled config keeps its state on the volume.
# MALLOC_ARENA_MAX=2: glibc gives each thread that allocates its own malloc arena, and node's V8 and libuv
# threads each keep one; two arenas cut the backfill's peak RSS by 5-15 MB on Node 24 (docs/benchmarks.md).
# MALLOC_MMAP_THRESHOLD_=131072: blocks of 128 KB and more (the rules' and the poller's id tables) are mapped on
# their own and given back to the system when freed. glibc's default raises this threshold up to 32 MB as such
# blocks are freed, after which every table that grew left a hole in the heap it kept: 6-10 MB of the
# shipped-rules backfill's peak on Node 24, for a few percent of its throughput (docs/benchmarks.md).
ENV NODE_ENV=production \
    TRANSFER_WATCH_STATE_DIR=/var/lib/transfer-watch \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json README.md config.example.yaml ./
COPY rules ./rules
COPY docs/runbooks ./docs/runbooks
COPY schemas ./schemas
# A default config and rules at the documented place; mount your own config.yaml (and rules/) over them.
COPY config.example.yaml /etc/transfer-watch/config.yaml
COPY rules/*.yaml /etc/transfer-watch/rules/
# The state folder belongs to the unprivileged `node` user (uid 1000) of the official image. It is created
# before VOLUME so a new named volume starts with this owner.
RUN mkdir -p /var/lib/transfer-watch && chown node:node /var/lib/transfer-watch
USER node
VOLUME ["/var/lib/transfer-watch"]
EXPOSE 9464
# No curl in slim images: node asks /healthz itself. Set HEALTHCHECK_URL when server.listen uses another port.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL || 'http://127.0.0.1:9464/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM/SIGHUP itself. The daemon handles both (finish the cycle,
# flush state and outbox, exit 0; reload on SIGHUP), and it starts no child processes, so nothing needs an
# init to reap zombies. `docker run --init` adds tini if you want one anyway.
STOPSIGNAL SIGTERM
# V8 tuning (docs/benchmarks.md): a 4 MB semi-space instead of 16 (64 on newer Node with much memory), which only
# the command line can set; and no Maglev, the mid-tier compiler of Node 22+, whose compile jobs held ~15 MB of
# native memory through the benchmark's backfill on Node 24 (hot code still reaches TurboFan; only warm-up is
# slower). The CLI limits the old space's growth itself (src/util/heap-growth.ts). A 1M-record backfill then
# peaks near 150 MB on Node 24 instead of 300 MB, at a few percent of throughput. None of them caps the heap, so
# a daemon that needs more memory still gets it.
ENTRYPOINT ["node", "--max-semi-space-size=4", "--no-maglev", "/app/dist/cli/main.js"]
CMD ["run", "--config", "/etc/transfer-watch/config.yaml"]
