import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { z } from 'zod';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * A body the handler reads itself (streamed, or in more than one media type), by media type:
     * in the OpenAPI document only, never validated before the handler runs.
     */
    documentedBody?: Record<string, z.ZodType>;
  }
}

/**
 * The OpenAPI 3.1 document of the routes, generated from the same schemas that validate their
 * requests: served at /openapi.json and committed as docs/openapi.json, which a test keeps equal.
 */
export const openApiOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Hopline answer-gateway',
      description:
        'Multi-hop question answering over knowledge bases. Every error is an RFC 9457 problem document ' +
        '(application/problem+json) with a stable `type`.',
      version: '1',
    },
    components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
    security: [{ apiKey: [] }],
  },
  transform: (route) => {
    const { documentedBody, ...schema } = route.schema ?? {};
    const transformed = jsonSchemaTransform({ ...route, schema });
    if (!documentedBody) return transformed;
    const content = Object.fromEntries(
      Object.entries(documentedBody).map(([mediaType, body]) => [
        mediaType,
        { schema: z.toJSONSchema(body, { io: 'input', unrepresentable: 'any' }) },
      ]),
    );
    return { ...transformed, schema: { ...transformed.schema, body: { content } } };
  },
};
