# The forkflow worker image: compiled TypeScript on Node 20, production dependencies only.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm install against the lock (see scripts/bootstrap.mjs for why not npm ci).
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev

FROM node:20-bookworm-slim
# git for worktree isolation; ca-certificates for TLS to Temporal Cloud and Anthropic; openssl
# to make the stack's mutual TLS certificates (docker-compose.mtls.yml, scripts/stack/make-certs.sh);
# bubblewrap, the OS sandbox every fork's Bash commands run in (the worker refuses Bash
# without it). Run the container so that it may create user namespaces: Docker's default
# seccomp and AppArmor profiles forbid that (e.g. --security-opt seccomp=unconfined
# --security-opt apparmor=unconfined, or a profile allowing unshare/clone of namespaces).
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates openssl bubblewrap && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/lib ./lib
COPY package.json ./
COPY bin ./bin
COPY scripts/stack/make-certs.sh ./scripts/stack/make-certs.sh
# Not root: the sandbox's process limit (RLIMIT_NPROC) holds only for other users.
USER node
ENV NODE_ENV=production FORKFLOW_WORKSPACE=/workspace
ENTRYPOINT ["node", "bin/forkflow.js"]
CMD ["worker"]
