# syntax=docker/dockerfile:1
# The switchyard CLI as an image: `docker run … <image> worker`, `… api`, etc.
# docker-compose.yml runs redis, api, scalable workers and the scheduler from it.
# Node 24 (LTS) by default; `--build-arg NODE_VERSION=22` (or 20) builds on another
# supported line (package.json engines: ^20.19 || ^22.12 || >=24).
ARG NODE_VERSION=24

# ---- build: dependencies, TypeScript, the SDK and the example plugins ----------
FROM node:${NODE_VERSION}-bookworm-slim AS build
# `npm run build` also builds the native example plugin, which needs a C compiler.
RUN apt-get update \
  && apt-get install -y --no-install-recommends gcc libc6-dev \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json sdk/
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

# ---- runtime: the built CLI, production dependencies, a non-root user ------------
FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    SWITCHYARD_DATA_DIR=/var/lib/switchyard
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/sdk/package.json ./sdk/package.json
COPY --from=build --chown=root:root /app/sdk/dist ./sdk/dist
COPY --from=build --chown=root:root /app/examples/plugins/fixture-inspector/dist ./examples/plugins/fixture-inspector/dist
RUN chmod 0755 /app/dist/cli/main.js \
  && ln -s /app/dist/cli/main.js /usr/local/bin/switchyard \
  && mkdir -p /var/lib/switchyard/plugins \
  && chown -R node:node /var/lib/switchyard
# The code is root-owned and read-only to the process; only the data dir is its own.
USER node
VOLUME ["/var/lib/switchyard"]
EXPOSE 7317
ENTRYPOINT ["switchyard"]
CMD ["--help"]
