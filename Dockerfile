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

# The app runs its TypeScript through tsx, as `npm start` does ("tsx src/main.ts"). We start node
# directly rather than through npm: npm passes SIGTERM only to its `sh -c` child, which does not
# pass it on, so with `npm start` the app would never shut down cleanly on `docker stop`.
CMD ["node", "--import", "tsx", "src/main.ts"]
