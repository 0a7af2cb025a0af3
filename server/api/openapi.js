// GET /api/openapi.json: an OpenAPI 3.1 document built from the routes' own schemas (parameters, bodies and
// answers) and the shared schemas they name, so it cannot drift from what the routes take and send.
import { openApiParameters } from '../query/params.js';
import { components, openApiSchema } from './schemas.js';

/** @param {string|number} code */
const describe = (code) => (String(code).startsWith('2') ? 'done' : 'refused');

/**
 * A route's answer as an OpenAPI response: JSON unless its schema names its content types.
 * @param {string} code @param {Record<string, any>} schema
 */
function response(code, schema) {
  if (schema.content) return { description: schema.description ?? describe(code), content: openApiSchema(schema.content) };
  if (schema.type === 'null') return { description: schema.description ?? describe(code) };
  return { description: schema.description ?? describe(code), content: { 'application/json': { schema: openApiSchema(schema) } } };
}

/**
 * @param {any[]} routes the API's routes, as Fastify's onRoute hook gives them
 * @returns {Record<string, any>}
 */
export function openApi(routes) {
  /** @type {Record<string, any>} */
  const paths = {};
  for (const route of routes) {
    const schema = route.schema ?? {};
    if (schema.hide) continue;
    const path = route.url.replace(/:([A-Za-z]+)/g, '{$1}');
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      /** @type {any[]} */
      const parameters = [];
      if (schema.listQuery) parameters.push(...openApiParameters(schema.listQuery));
      for (const [where, s] of [
        ['query', schema.querystring],
        ['path', schema.params],
      ]) {
        for (const [name, p] of Object.entries(s?.properties ?? {})) {
          parameters.push({ name, in: where, required: where === 'path', schema: openApiSchema(p) });
        }
      }
      const responses = Object.fromEntries(Object.entries(schema.response ?? {}).map(([code, body]) => [code, response(code, body)]));
      (paths[path] ??= {})[method.toLowerCase()] = {
        summary: schema.summary ?? '',
        ...(schema.tags ? { tags: schema.tags } : {}),
        parameters,
        ...(schema.body ? { requestBody: { required: true, content: { 'application/json': { schema: openApiSchema(schema.body) } } } } : {}),
        responses,
      };
    }
  }
  return { openapi: '3.1.0', info: { title: 'otlp-mock admin API', version: '1' }, paths, components: { schemas: components() } };
}
