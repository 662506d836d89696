import { Client, errors } from '@elastic/elasticsearch';
import MockModule from '@elastic/elasticsearch-mock';
import type { ElasticsearchSetupLog } from '../../src/remote.js';

// The package is CommonJS (`module.exports = Mocker`) but its typings declare a default export.
const Mock = MockModule as unknown as typeof MockModule.default;

export interface RecordedRequest {
  method: string;
  path: string;
  querystring: Record<string, string>;
  body: unknown;
}

type Reply = (request: RecordedRequest) => unknown;

/**
 * An Elasticsearch client on `@elastic/elasticsearch-mock`: every request the adapter sends is
 * recorded, and each route answers what the test scripts. Routes a test does not script answer
 * as an empty cluster would at start-up (smartcn present, no indexes yet; a mapping update is
 * acknowledged).
 */
export function esMock(): {
  client: Client;
  requests: RecordedRequest[];
  on(method: string, path: string, reply: Reply): void;
  sent(method: string, path: string): RecordedRequest[];
} {
  const mock = new Mock();
  const requests: RecordedRequest[] = [];
  const on = (method: string, path: string, reply: Reply): void => {
    mock.clear({ method, path });
    mock.add({ method, path }, (params: unknown) => {
      const request = params as unknown as RecordedRequest;
      requests.push(request);
      return reply(request) as Record<string, unknown>;
    });
  };
  on('POST', '/_analyze', () => ({ tokens: [{ token: '第十二条' }] }));
  on('HEAD', '/:index', () => responseError(404, ''));
  on('PUT', '/:index', (request) => ({ acknowledged: true, index: request.path.slice(1) }));
  on('PUT', '/:index/_mapping', () => ({ acknowledged: true }));
  const client = new Client({ node: 'http://localhost:9200', Connection: mock.getConnection(), maxRetries: 0 });
  return {
    client,
    requests,
    on,
    sent: (method, path) => requests.filter((r) => r.method === method && r.path === path),
  };
}

/** What Elasticsearch answers with an error status, as the client will see it. */
export function responseError(
  statusCode: number,
  type: string,
  reason = '',
): InstanceType<typeof errors.ResponseError> {
  const body = type ? { error: { type, reason }, status: statusCode } : '';
  return new errors.ResponseError({
    body,
    statusCode,
    headers: {},
    warnings: null,
    meta: {},
  } as unknown as ConstructorParameters<typeof errors.ResponseError>[0]);
}

export const silentLog: ElasticsearchSetupLog = { info() {}, warn() {} };
