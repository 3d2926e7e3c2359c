# One image for every role; docker-compose.yml picks the role with the command.
# The same Node release as package.json pins for `npm start` and `npm test` (test/architecture/runtime.test.ts).
FROM node:24.21.0-bookworm-slim@sha256:2fe369e969550cde8e867afc3fe370b260140cab4a23d467074295b42163d553
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY api ./api
COPY workers ./workers
COPY src ./src
COPY migrations ./migrations
COPY tsconfig.json ./
USER node
EXPOSE 3000 2525
# node itself is PID 1 (tsx as a loader, no wrapper process), so SIGTERM from `docker stop` reaches it.
CMD ["node", "--import", "tsx", "bin/start.ts", "all"]
