import { describe, expect, it } from 'vitest';
import { bearer, startTestGateway } from './support/harness.js';

describe('answer-gateway ingestion - document ids', () => {
  it('ingestion - "." and ".." are refused as document ids, since a URL could never name them to delete', async () => {
    await using t = await startTestGateway();
    const ingest = (docId: string) =>
      fetch(`${t.baseUrl}/v1/kbs/projects/documents`, {
        method: 'POST',
        headers: { ...bearer(t.keys.alice), 'Content-Type': 'application/json' },
        body: JSON.stringify({ docId, title: 'Atlas', text: 'Project Atlas is owned by Dana Reyes.' }),
      });
    for (const docId of ['.', '..']) {
      const refused = await ingest(docId);
      expect(refused.status, docId).toBe(400);
      expect(((await refused.json()) as { detail: string }).detail).toContain('docId cannot be "." or ".."');
    }
    expect((await ingest('...')).status).toBe(202);
    expect(t.reasoner.asks).toHaveLength(0);
  });
});
