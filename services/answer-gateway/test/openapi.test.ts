import { describe, expect, it } from 'vitest';
import { startTestGateway } from './support/harness.js';

// The committed contract: `pnpm gen:openapi` rewrites it from the routes; CI fails when it drifts.
const COMMITTED = '../../../docs/openapi.json';

describe('answer-gateway OpenAPI document', () => {
  it('openapi - /openapi.json is generated from the routes and equals docs/openapi.json', async () => {
    await using t = await startTestGateway();
    const response = await fetch(`${t.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
    };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths).sort()).toEqual([
      '/v1/ask',
      '/v1/kbs',
      '/v1/kbs/{kb}',
      '/v1/kbs/{kb}/documents',
      '/v1/kbs/{kb}/documents/{doc}',
      '/v1/questions/{id}',
      '/v1/questions/{id}/events',
      '/v1/questions/{id}/trace',
    ]);
    expect(document.paths['/v1/ask']?.post?.requestBody).toMatchObject({
      content: { 'application/json': { schema: { required: ['question'] } } },
    });
    await expect(`${JSON.stringify(document, null, 2)}\n`).toMatchFileSnapshot(COMMITTED);
  });
});
