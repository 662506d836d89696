# syntax=docker/dockerfile:1.7
#
# One image recipe for the five Hopline services; the build argument SERVICE picks which:
#
#   docker build --build-arg SERVICE=retrieval-worker -t hopline/retrieval-worker:0.1.0 .
#
# Stages: `build` installs the whole workspace from the lockfile and compiles it (tsc -b); `bundle`
# reinstalls production dependencies for SERVICE and the workspace packages it depends on, and
# copies out only those packages' compiled output; the final stage is a slim Node 22 LTS runtime
# that runs the service as the unprivileged `node` user.

# Node 22 LTS, pinned by exact version and by the digest of its multi-arch index.
ARG NODE_IMAGE=node:22.22.0-bookworm-slim@sha256:dd9d21971ec4395903fa6143c2b9267d048ae01ca6d3ea96f16cb30df6187d94

FROM ${NODE_IMAGE} AS base
ENV PNPM_HOME=/pnpm \
    PATH=/pnpm:$PATH \
    COREPACK_ENABLE_DOWNLOAD_PROMPT=0 \
    CI=true
# corepack provides the pnpm version that package.json's packageManager pins.
RUN corepack enable
WORKDIR /app

FROM base AS build
# hnswlib-node compiles a native addon at install time.
RUN apt-get update \
    && apt-get install --yes --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
# The store is filled from the lockfile alone (and the patches it names), so this layer survives
# source changes.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
COPY patches ./patches
RUN --mount=type=cache,id=hopline-pnpm-store,target=/pnpm/store \
    pnpm fetch --frozen-lockfile
COPY . .
RUN --mount=type=cache,id=hopline-pnpm-store,target=/pnpm/store \
    pnpm install --offline --frozen-lockfile
RUN pnpm build

FROM build AS bundle
ARG SERVICE
RUN test -n "${SERVICE}" && test -f "services/${SERVICE}/package.json" \
    || { echo "build with --build-arg SERVICE=<one of: $(ls services | tr '\n' ' ')>" >&2; exit 1; }
# Production dependencies only, and only for SERVICE and the workspace packages it depends on
# (--filter-prod follows `dependencies`, not `devDependencies`).
RUN --mount=type=cache,id=hopline-pnpm-store,target=/pnpm/store \
    rm -rf node_modules packages/*/node_modules services/*/node_modules test/node_modules \
    && pnpm install --offline --frozen-lockfile --prod --filter-prod "@hopline/${SERVICE}..."
RUN node deploy/docker/bundle.mjs "${SERVICE}" /bundle

FROM ${NODE_IMAGE} AS runtime
ARG SERVICE
LABEL org.opencontainers.image.title="hopline-${SERVICE}"
ENV NODE_ENV=production \
    OTEL_SERVICE_NAME=${SERVICE} \
    METRICS_PORT=9464
COPY --from=bundle /bundle /app
# A writable place for the embedded indexes (DATA_DIR) when no Elasticsearch or Milvus is set.
RUN mkdir -p /var/lib/hopline && chown node:node /var/lib/hopline
WORKDIR /app/services/${SERVICE}
USER node
EXPOSE 9464
# /healthz on METRICS_PORT answers for every service; gRPC servers also speak grpc.health.v1,
# which Kubernetes probes directly.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["node", "/app/healthcheck.mjs"]
CMD ["node", "--enable-source-maps", "--import", "./dist/instrumentation.js", "./dist/main.js"]
