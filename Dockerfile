FROM node:20-bookworm-slim

WORKDIR /app

# Dependencies first, for layer caching. package-lock.json must keep its hand-added @chdb entries
# (see README, "About package-lock.json"), or npm ci stops.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

COPY . .
# Only used when no DATABASE_URL / CLICKHOUSE_URL is given (embedded stores).
RUN mkdir -p /app/.data && chown node:node /app/.data

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000
EXPOSE 8000
USER node

# The app runs its TypeScript through tsx's loader in one node process, as `npm start` does. Node
# is started directly rather than through npm, so `docker stop`'s SIGTERM reaches the app itself
# and it shuts down cleanly (drains requests, checkpoints, stops the stores).
CMD ["node", "--import", "tsx", "src/main.ts"]
