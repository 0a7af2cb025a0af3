// POST /mcp: the admin API as Model Context Protocol tools (streamable HTTP, stateless), for coding agents. Each
// tool is one REST route, called through the app itself: the same parameters, limits and errors, and the same
// access rules, since /mcp is an admin route and the caller's token is passed on.
import { readFileSync } from 'node:fs';
import { openApiParameters } from '../query/params.js';
import { RELAYS, tooLargeAnswered } from './access.js';
import { TOKEN_HEADER } from './access-check.js';
import { inlineSchema } from './schemas.js';
import { MAX_VERIFY_BYTES } from './verify.js';

export const MCP_PATH = '/mcp';

const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/** @type {Promise<Sdk>|undefined} */
let loading;
/**
 * The SDK, loaded with the first message to /mcp: it takes about as long to load as the rest of the server, and
 * a server that no agent talks to need not wait for it.
 * @typedef {typeof import('@modelcontextprotocol/sdk/server/index.js') & typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')
 *   & typeof import('@modelcontextprotocol/sdk/types.js')} Sdk
 * @returns {Promise<Sdk>}
 */
const sdk = () =>
  (loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([server, transport, types]) => ({ ...server, ...transport, ...types })));

/**
 * The tools, each a route of the REST API. Its input schema is the route's own: the list query's parameters, the
 * path parameters and query string, or the body.
 * @typedef {{ name: string, method: 'GET'|'POST'|'DELETE', url: string, note?: string }} ToolRoute
 * @type {ToolRoute[]}
 */
const TOOLS = [
  { name: 'list_services', method: 'GET', url: '/api/services' },
  { name: 'search_spans', method: 'GET', url: '/api/spans' },
  { name: 'search_traces', method: 'GET', url: '/api/traces' },
  { name: 'search_logs', method: 'GET', url: '/api/logs' },
  { name: 'search_metrics', method: 'GET', url: '/api/metrics' },
  { name: 'get_trace', method: 'GET', url: '/api/traces/:traceId' },
  { name: 'verify', method: 'POST', url: '/api/verify' },
  { name: 'snapshot', method: 'GET', url: '/api/snapshot' },
  { name: 'add_fault_rule', method: 'POST', url: '/api/faults' },
  { name: 'list_fault_rules', method: 'GET', url: '/api/faults' },
  { name: 'remove_fault_rule', method: 'DELETE', url: '/api/faults/:id' },
  { name: 'fault_report', method: 'GET', url: '/api/faults/:id/report', note: 'Ask before removing the rule: the report needs it.' },
  { name: 'clear', method: 'DELETE', url: '/api/telemetry', note: 'Fault rules stay.' },
];

/** Path parameters of a route URL. @param {string} url */
const pathNames = (url) => [...url.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);

/** The arguments a route takes, as one JSON schema object. @param {any} schema a route's schema */
function inputSchema(schema) {
  if (schema.body) return inlineSchema(schema.body);
  /** @type {Record<string, any>} */
  const properties = {};
  /** @type {Record<string, any>} */
  const patternProperties = {};
  if (schema.listQuery)
    for (const p of openApiParameters(schema.listQuery)) {
      const property = { ...p.schema, description: p.description };
      if (p.name.endsWith('.<key>')) patternProperties[`^${p.name.slice(0, -'<key>'.length).replace('.', '\\.')}.+`] = property;
      else properties[p.name] = property;
    }
  Object.assign(properties, schema.params?.properties, schema.querystring?.properties);
  return inlineSchema({
    type: 'object',
    properties,
    ...(Object.keys(patternProperties).length ? { patternProperties } : {}),
    required: schema.params?.required ?? [],
    additionalProperties: schema.querystring?.additionalProperties ?? false,
  });
}

/**
 * @param {Sdk} mcp @param {ToolRoute} tool @param {Record<string, unknown>} args @param {Record<string, string>} headers
 * @returns {import('fastify').InjectOptions}
 */
function restRequest({ McpError, ErrorCode }, tool, args, headers) {
  const rest = { ...args };
  let url = tool.url;
  for (const name of pathNames(tool.url)) {
    const value = rest[name];
    delete rest[name];
    if (typeof value !== 'string' || value === '') throw new McpError(ErrorCode.InvalidParams, `${tool.name} needs '${name}', a string`);
    url = url.replace(`:${name}`, encodeURIComponent(value));
  }
  if (tool.method === 'POST') return { method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(rest) };
  /** @type {Record<string, string|string[]>} */
  const query = {};
  for (const [name, value] of Object.entries(rest)) {
    const list = Array.isArray(value) ? value : [value];
    if (!list.every((v) => ['string', 'number', 'boolean'].includes(typeof v)))
      throw new McpError(ErrorCode.InvalidParams, `${tool.name}: '${name}' must be a string, number or boolean, got ${JSON.stringify(value)}`);
    query[name] = list.map(String);
  }
  return { method: tool.method, url, headers, query };
}

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{ routes: any[] }} api the REST routes registered on app (filled as they are added)
 */
export function registerMcp(app, { routes }) {
  /** The tools whose routes this app has (fault rules only with a collector), with their route's schema. */
  const available = () =>
    TOOLS.flatMap((tool) => {
      const route = routes.find((r) => r.url === tool.url && [r.method].flat().includes(tool.method));
      return route ? [{ tool, schema: route.schema ?? {} }] : [];
    });

  /**
   * A server for one request: stateless, as the transport is.
   * @param {Sdk} mcp @param {Record<string, string>} headers passed on to the REST routes
   */
  const serverFor = (mcp, headers) => {
    const { Server, ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode } = mcp;
    const server = new Server({ name: 'otlp-mock', version }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: available().map(({ tool, schema }) => ({
        name: tool.name,
        description: [schema.summary, schema.body?.description, tool.note].filter(Boolean).join('. '),
        inputSchema: inputSchema(schema),
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tools = available();
      const found = tools.find(({ tool }) => tool.name === request.params.name);
      if (!found) throw new McpError(ErrorCode.InvalidParams, `no tool '${request.params.name}': the tools are ${tools.map(({ tool }) => tool.name).join(', ')}`);
      const response = await app.inject(restRequest(mcp, found.tool, request.params.arguments ?? {}, headers));
      const text = response.statusCode === 204 ? 'done' : response.body;
      // A REST error is the tool's answer, not the protocol's: the agent reads what was wrong and can try again.
      if (response.statusCode >= 400) return { isError: true, content: [{ type: 'text', text: `${response.statusCode} ${text}` }] };
      return { content: [{ type: 'text', text }] };
    });
    return server;
  };

  app.register(async (scope) => {
    // Malformed JSON, an oversized body or a wrong media type, answered as JSON-RPC errors the client can show.
    scope.setErrorHandler(async (/** @type {import('fastify').FastifyError} */ err, _request, reply) => {
      const { ErrorCode } = await sdk();
      const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      if (status === 413 && !(await tooLargeAnswered(reply))) return reply;
      const code = status === 400 ? ErrorCode.ParseError : status === 500 ? ErrorCode.InternalError : ErrorCode.InvalidRequest;
      return reply.code(status).send({ jsonrpc: '2.0', id: null, error: { code, message: err.message } });
    });

    scope.post(MCP_PATH, { bodyLimit: MAX_VERIFY_BYTES, config: RELAYS }, async (request, reply) => {
      /** @type {Record<string, string>} */
      const headers = {};
      for (const name of ['authorization', TOKEN_HEADER]) {
        const value = request.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const mcp = await sdk();
      const server = serverFor(mcp, headers);
      const transport = new mcp.StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      // Closing the server closes its transport.
      reply.raw.on('close', () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    });

    // Stateless: no stream to open with GET and no session to end with DELETE.
    scope.route({
      method: ['GET', 'DELETE'],
      url: MCP_PATH,
      handler: async (request, reply) => {
        const { ErrorCode } = await sdk();
        return reply
          .code(405)
          .header('allow', 'POST')
          .send({
            jsonrpc: '2.0',
            id: null,
            error: { code: ErrorCode.ConnectionClosed, message: `${request.method} ${MCP_PATH}: this server is stateless, send each message with POST` },
          });
      },
    });
  });
}
