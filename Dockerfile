# otlp-mock: docker build -t otlp-mock .
# Works with the classic builder and BuildKit alike (no --mount, no heredocs), so an engine as old as
# Debian's docker.io 20.10 builds it.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The image serves whatever web/dist holds; an empty one still lets the API and receivers start.
RUN npm run build --if-present && mkdir -p web/dist

FROM node:24-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
# A stage of its own so that the npm cache never reaches a layer of the final image.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    OTLP_MOCK_HOST=0.0.0.0
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /app/web/dist ./web/dist
COPY proto ./proto
COPY server ./server
# Files stay owned by root: the collector only reads them, so the node user cannot alter its own code.
USER node
EXPOSE 4317 4318 4319
# The engine runs the first probe one interval after start (--start-interval needs Engine 25+), so the
# interval is what bounds the time to healthy. The port follows OTLP_MOCK_UI_PORT when it is set.
HEALTHCHECK --interval=1s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.OTLP_MOCK_UI_PORT||4319}/api/health`,{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "server/cli.js"]
