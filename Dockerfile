# otlp-mock: docker build -t otlp-mock .
# Works with the classic builder and BuildKit alike (no --mount, no heredocs), so an engine as old as
# Debian's docker.io 20.10 builds it.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# Only what the UI build reads, so that a change to the server does not rebuild the UI.
COPY scripts ./scripts
COPY web ./web
RUN npm run build

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
# interval bounds the time to healthy. A probe that finds the API not yet listening keeps asking for up to
# 2.5 s instead of failing, so a collector still starting at the first probe is healthy as soon as it
# answers, not one interval later. node:http rather than fetch: loading fetch triples the probe's CPU time
# (about 150 ms against 50 ms), paid every second. The port follows OTLP_MOCK_UI_PORT when it is set.
HEALTHCHECK --interval=1s --timeout=4s --start-period=10s --retries=3 \
  CMD ["node", "-e", "const port=process.env.OTLP_MOCK_UI_PORT||4319,end=Date.now()+2500;const retry=()=>Date.now()>end?process.exit(1):setTimeout(probe,50);const probe=()=>require('http').get({host:'127.0.0.1',port,path:'/api/health',timeout:1000},(r)=>{r.resume();if(r.statusCode===200)process.exit(0);retry()}).on('timeout',function(){this.destroy()}).on('error',retry);probe()"]
STOPSIGNAL SIGTERM
# The CLI is the entrypoint, so flags go straight after the image name: docker run otlp-mock --max-spans 1000
ENTRYPOINT ["node", "server/cli.js"]
CMD []
